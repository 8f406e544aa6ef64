/* libFuzzer entry: a model file through load, check, plan and every
 * emitter (see targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ppcc_fuzz_plan(data, size);
}
