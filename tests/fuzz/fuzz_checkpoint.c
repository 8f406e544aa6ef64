/* libFuzzer entry: a checkpoint MANIFEST or shard through the parser a
 * load runs (see targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ppcc_fuzz_checkpoint(data, size);
}
