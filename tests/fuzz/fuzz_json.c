/* libFuzzer entry: a schedule JSON through ppcc check's reader and the
 * validator (see targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ppcc_fuzz_json(data, size);
}
