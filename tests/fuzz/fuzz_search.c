/* libFuzzer entry: a model file through load and the configuration
 * search under a small work budget (see targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ppcc_fuzz_search(data, size);
}
