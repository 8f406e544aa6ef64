/*
 * devices.c - the device catalogue, one row a device.  The figures and
 * their sources are in doc/design/devices.md; `make fidelity` fits the
 * calibrated constants and their held-out errors, and fails when a row
 * here differs from what it computes.
 */
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

#define SC21 "SC'21 Table 1"
#define HOPPER PPCC_NVLS_HOPPER
#define BLACKWELL PPCC_NVLS_BLACKWELL
#define NONE PPCC_NVLS_NONE
#define NO_FP8_FIT 0, NULL, 0, 0, 0, 0
#define U PPCC_UNCALIBRATED_EFFICIENCY, NULL, 0, 0, 0, 0, NO_FP8_FIT, \
	PPCC_UNCALIBRATED_TIE_BAND
/* Hopper's FP8 gain, fitted on NeMo 24.07's FP8 runs (doc/fidelity/
 * runs.md S7) with the A100's stand-in 16-bit constant; the H800 and
 * H200 are the same chip */
#define NEMO_FP8 "NeMo 24.07's FP8 runs"
#define U8(from) PPCC_UNCALIBRATED_EFFICIENCY, NULL, 0, 0, 0, 0, \
	PPCC_HOPPER_FP8_GAIN, from, PPCC_HOPPER_FP8_FITTED, \
	PPCC_HOPPER_FP8_HELD, PPCC_HOPPER_FP8_HELD_ERROR, \
	PPCC_HOPPER_FP8_HELD_WORST, PPCC_UNCALIBRATED_TIE_BAND
#define AS_H100 " (on the h100: the same chip)"
/* attention's kernels (doc/design/attention.md): FlashAttention-2's
 * and cuDNN's TFLOP/s, causal, head width 128, at 512 to 16k tokens,
 * forward, then forward and backward together; none measured: 0 */
#define ATTN_NONE {{0}}, {{0}}, NULL
#define ATTN_A100 {{0}}, {{99, 133, 155, 173, 182, 189}}, "A100 SXM4 80 GB"
#define ATTN_H100 {{191, 260, 298, 319, 333, 335}, \
		   {315, 410, 484, 518, 529, 539}}, \
		  {{163, 221, 265, 294, 308, 328}}, "H100 SXM5"

const double ppcc_attn_lens[PPCC_ATTN_LENS] = {512, 1024, 2048, 4096, 8192,
					       16384};

/* name, label; TF32, BF16, FP8 (dense TFLOP/s; 0 none or not published);
 * memory GiB, GB/s; node and host devices, link in the node and network
 * (GB/s one way, per device; a network of 0: no usual system, ppcc's
 * default); NVLink SHARP (HOPPER, BLACKWELL or NONE: devices.h);
 * efficiency, calibration, runs fitted and held out, the held-out runs'
 * mean and largest absolute error (%), the tie band (%); the compute
 * capability x 10, and attention's kernels' rates */
const ppcc_device_preset ppcc_device_presets[] = {
	{"a100-40gb", "NVIDIA A100 SXM4 40 GB", 156, 312, 0, 40, 1555, 8, 8,
	 300, 25, NONE, PPCC_A100_EFFICIENCY,
	 SC21 " (as the a100: the same chip)", 7, 3, 3.7, 4.9, NO_FP8_FIT,
	 PPCC_A100_TIE_BAND, 80, ATTN_A100},
	{"a100", "NVIDIA A100 SXM4 80 GB", 156, 312, 0, 80, 2039, 8, 8, 300, 25,
	 NONE, PPCC_A100_EFFICIENCY, SC21, 7, 3, 3.7, 4.9, NO_FP8_FIT,
	 PPCC_A100_TIE_BAND, 80, ATTN_A100},
	{"h100", "NVIDIA H100 SXM5 80 GB", 494.7, 989.4, 1978.9, 79.65, 3350,
	 8, 8, 450, 50, HOPPER, U8(NEMO_FP8), 90, ATTN_H100},
	{"h100-pcie", "NVIDIA H100 PCIe 80 GB", 378, 756, 1513, 80, 2000, 8, 8,
	 64, 0, NONE, U, 90, ATTN_NONE},
	{"h800", "NVIDIA H800 SXM5 80 GB", 494.7, 989.4, 1978.9, 80, 3350, 8, 8,
	 200, 50, HOPPER, U8(NEMO_FP8 AS_H100), 90, ATTN_H100},
	{"h200", "NVIDIA H200 SXM5 141 GB", 494.7, 989.4, 1978.9, 140.4, 4800,
	 8, 8, 450, 50, HOPPER, U8(NEMO_FP8 AS_H100), 90, ATTN_H100},
	{"b200", "NVIDIA B200 (HGX B200)", 1100, 2250, 4500, 179.06, 8000, 8, 8,
	 900, 50, BLACKWELL, U, 100, ATTN_NONE},
	{"gb200", "NVIDIA GB200 NVL72, per GPU", 1250, 2500, 5000, 186, 8000,
	 72, 4, 900, 50, BLACKWELL, U, 100, ATTN_NONE},
	{"mi300x", "AMD Instinct MI300X", 0, 1307.4, 2614.9, 192, 5300, 8, 8, 448,
	 0, NONE, U, 0, ATTN_NONE},
	{"l40s", "NVIDIA L40S", 183, 362.05, 733, 44.99, 864, 8, 8, 32, 0, NONE,
	 U, 89, ATTN_NONE},
};

const int ppcc_n_device_presets =
	(int)(sizeof ppcc_device_presets / sizeof ppcc_device_presets[0]);

void ppcc_device_preset_names(const char **out)
{
	for (int i = 0; i < ppcc_n_device_presets; i++)
		out[i] = ppcc_device_presets[i].name;
	out[ppcc_n_device_presets] = NULL;
}

int ppcc_device_presets_by_memory(const ppcc_device_preset **out)
{
	int n = 0;
	for (int i = 0; i < ppcc_n_device_presets &&
			i < PPCC_MAX_DEVICE_PRESETS; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		int at = n++;
		while (at > 0 && out[at - 1]->memory_gib > p->memory_gib) {
			out[at] = out[at - 1];
			at--;
		}
		out[at] = p;
	}
	return n;
}

double ppcc_device_preset_fp8_gain(const ppcc_device_preset *p,
				   int *out_fitted)
{
	int fitted = p->fp8 > 0 && p->fp8_calibration && p->fp8_gain > 0;
	if (out_fitted)
		*out_fitted = fitted;
	return fitted ? p->fp8_gain : p->fp8 > 0 ? p->fp8 / p->bf16 : 0;
}

/* Kernel k's backward from its forward f and both together fb, or 0. */
static double backward_of(double f, double fb)
{
	return f > 0 && fb > 0 && 3.5 / fb > 1 / f ? 2.5 / (3.5 / fb - 1 / f)
						  : 0;
}

int ppcc_device_attention(double *out_f, double *out_b,
			  const ppcc_device_preset *p, int k, int i)
{
	*out_f = *out_b = 0;
	if (k < PPCC_ATTN_FA2 || k > PPCC_ATTN_CUDNN || i < 0 ||
	    i >= PPCC_ATTN_LENS)
		return 0;
	double f = p->attn_fwd[k - 1][i], fb = p->attn_both[k - 1][i];
	if (f > 0 && fb > 0) {
		*out_f = f;
		*out_b = backward_of(f, fb);
	} else if (fb > 0) {
		*out_f = *out_b = fb;
	} else if (f > 0) {
		/* the other kernel's ratio on the same chip */
		int o = 2 - k;
		double of = p->attn_fwd[o][i];
		double ob = backward_of(of, p->attn_both[o][i]);
		*out_f = f;
		*out_b = ob > 0 ? f * ob / of : f;
	}
	return *out_f > 0 && *out_b > 0;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

const ppcc_device_preset *ppcc_device_preset_find(const char *name,
						  size_t len)
{
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const char *n = ppcc_device_presets[i].name;
		size_t k = 0;
		if (strlen(n) != len)
			continue;
		while (k < len && lower((unsigned char)name[k]) == n[k])
			k++;
		if (k == len)
			return &ppcc_device_presets[i];
	}
	return NULL;
}

double ppcc_device_tie_band(char *out, size_t size, const ppcc_cluster *cl)
{
	const ppcc_device_preset *from = NULL;
	const char *stand_in = NULL;
	double band = 0;
	for (int g = 0; g < cl->n_groups; g++) {
		const ppcc_device_group *dg = &cl->groups[g];
		const ppcc_device_preset *pr = dg->preset;
		double b = PPCC_UNCALIBRATED_TIE_BAND;
		if (!pr || dg->efficiency_given)
			stand_in = "the file's efficiency";
		else if (!pr->calibration)
			stand_in = pr->name;
		if (pr && pr->calibration && !dg->efficiency_given)
			b = pr->tie_band;
		if (g == 0 || b > band) {
			band = b;
			from = pr && pr->calibration && !dg->efficiency_given
			       ? pr : NULL;
		}
	}
	if (out && size > 0) {
		int n = snprintf(out, size, "%s on %s", from ? from->calibration
				 : SC21, from ? from->name : "a100");
		if (stand_in && n >= 0 && (size_t)n < size)
			snprintf(out + n, size - (size_t)n, " (%s is "
				 "uncalibrated: it ranks with the a100's)",
				 stand_in);
	}
	return band / 100.0;
}
