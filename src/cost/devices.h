/*
 * devices.h - the device catalogue: presets a cluster names (`device:
 * h100`, or `device: {preset: h100, memory_gib: 95}`), one row each,
 * every figure cited in doc/design/devices.md.  `ppcc devices` prints it.
 *
 * A row holds the vendor's dense peaks (no sparsity), the memory and its
 * bandwidth, the usual node (devices joined by NVLink, xGMI or PCIe) and
 * its per-device links, and the compute constant ppcc plans with: the
 * fraction of the dense 16-bit peak that a model's layers reach
 * (`efficiency`).  A constant is calibrated when it was fitted on
 * published measured runs (`calibration` says which, and how far the
 * runs held out of the fit land); an uncalibrated row plans with a
 * stated default and every estimate on it says so.
 */
#ifndef PPCC_COST_DEVICES_H
#define PPCC_COST_DEVICES_H

/* The sequence lengths the attention kernels were measured at. */
#define PPCC_ATTN_LENS 6
extern const double ppcc_attn_lens[PPCC_ATTN_LENS];

typedef struct ppcc_device_preset {
	const char *name;        /* the preset's name: "h100" */
	const char *label;       /* "NVIDIA H100 SXM5 80 GB" */
	double tf32, bf16, fp8;  /* dense peak TFLOP/s; fp8 0: none */
	double memory_gib;       /* what the device reports, GiB */
	double memory_gb_s;      /* memory bandwidth, GB/s */
	int node_devices;        /* devices of the usual node: its NVLink,
				  * xGMI or PCIe domain */
	int host_devices;        /* devices of one host, which a launcher
				  * starts (an NVL72 tray holds 4) */
	double intra_gb_s;       /* each device's link inside a node, GB/s
				  * one way */
	double inter_gb_s;       /* each device's network, GB/s one way; 0:
				  * no usual system (the default's) */
	int nvls;                /* NVLink SHARP in the usual node (NCCL's
				  * NVLS and NVLSTree): PPCC_NVLS_HOPPER or
				  * PPCC_NVLS_BLACKWELL, whose figures NCCL
				  * tunes apart; PPCC_NVLS_NONE without */
	double efficiency;       /* the compute constant */
	const char *calibration; /* what fitted it; NULL: uncalibrated */
	int fitted_runs, held_runs; /* published runs fitted, held out */
	double held_error, held_worst; /* the held-out runs' mean and largest
					* absolute error, percent */
	/* FP8: how many times as fast as its 16-bit products the device
	 * runs the FP8 ones Transformer Engine makes (0: uncalibrated, the
	 * FP8 peak over the 16-bit one), what fitted it, its runs fitted and
	 * held out, and the held-out runs' mean and largest absolute error
	 * (%) (`make fidelity`, doc/design/precision.md) */
	double fp8_gain;
	const char *fp8_calibration;
	int fp8_fitted, fp8_held;
	double fp8_held_error, fp8_held_worst;
	double tie_band;         /* two configurations' iterations that
				  * differ by less than this (percent) tie:
				  * the median over the calibration's pairs
				  * of runs of |e_i - e_j|, e = predicted /
				  * measured - 1 (doc/design/devices.md) */
	int arch;                /* compute capability x 10 (90: sm90);
				  * 0: not NVIDIA's */
	/* attention's flash kernels, [PPCC_ATTN_FA2 - 1] and
	 * [PPCC_ATTN_CUDNN - 1], causal, head width 128, at each of
	 * ppcc_attn_lens' sequence lengths: the measured TFLOP/s of the
	 * forward and of forward and backward together (the backward at
	 * 2.5 forwards' FLOPs); 0: not measured (ppcc_device_attention
	 * derives the rest, doc/design/attention.md) */
	double attn_fwd[2][PPCC_ATTN_LENS];
	double attn_both[2][PPCC_ATTN_LENS];
	const char *attn_chip;   /* the chip they were measured on */
} ppcc_device_preset;

/* A row's nvls: NCCL runs NVLS where an NVSwitch has multicast and the
 * GPUs' compute capability is 9.0 or more (doc/design/collectives.md);
 * the value is NCCL's architecture, whose NVLS efficiency differs. */
enum {
	PPCC_NVLS_NONE = 0,
	PPCC_NVLS_HOPPER = 9,
	PPCC_NVLS_BLACKWELL = 10
};

extern const ppcc_device_preset ppcc_device_presets[];
extern const int ppcc_n_device_presets;
/* Fills out[0 .. ppcc_n_device_presets] with the presets' names in the
 * catalogue's order and a NULL.  PPCC_MAX_DEVICE_PRESETS bounds them. */
#define PPCC_MAX_DEVICE_PRESETS 32
void ppcc_device_preset_names(const char **out);

/* Fills out with the presets in increasing memory (the catalogue's
 * order among equals); returns their count (at most
 * PPCC_MAX_DEVICE_PRESETS).  What "a larger device" means when nothing
 * fits. */
int ppcc_device_presets_by_memory(const ppcc_device_preset **out);

/* How many times as fast as its 16-bit products preset p runs FP8 ones:
 * its fitted fp8_gain (a calibration: 1), else its FP8 peak over its
 * 16-bit one (0: uncalibrated); 0 without FP8. */
double ppcc_device_preset_fp8_gain(const ppcc_device_preset *p,
				   int *out_fitted);

/* Attention kernel k's (PPCC_ATTN_FA2, PPCC_ATTN_CUDNN) forward and
 * backward TFLOP/s on preset p at ppcc_attn_lens[i]: the backward from
 * the forward and the two together (2.5 / (3.5 / both - 1 / fwd)), a
 * kernel measured together only at that rate both ways, one measured
 * forward only at the other kernel's ratio of backward to forward on
 * the same chip; 0 when k is not measured on p. */
int ppcc_device_attention(double *out_f, double *out_b,
			  const ppcc_device_preset *p, int k, int i);

/* The preset named name (len bytes, any case), or NULL. */
const ppcc_device_preset *ppcc_device_preset_find(const char *name,
						  size_t len);

/* The A100's constant, which `make fidelity` fits; the default an
 * uncalibrated row plans with, and why that value. */
#define PPCC_A100_EFFICIENCY 0.62
#define PPCC_UNCALIBRATED_EFFICIENCY PPCC_A100_EFFICIENCY
/* Hopper's FP8 gain and its check, which `make fidelity` fits */
#define PPCC_HOPPER_FP8_GAIN 1.33
#define PPCC_HOPPER_FP8_FITTED 2
#define PPCC_HOPPER_FP8_HELD 3
#define PPCC_HOPPER_FP8_HELD_ERROR 5.3
#define PPCC_HOPPER_FP8_HELD_WORST 10.8
#define PPCC_UNCALIBRATED_WHY \
	"the A100's constant, fitted on SC'21 Table 1, stands in"

/* The A100's tie band (percent), which `make fidelity` computes from the
 * same rows at the catalogue's efficiency; an uncalibrated row, and a
 * device without a preset, rank with it. */
#define PPCC_A100_TIE_BAND 4.4
#define PPCC_UNCALIBRATED_TIE_BAND PPCC_A100_TIE_BAND

/* The tie band the search ranks cl's configurations with, a fraction:
 * the largest of its device groups' rows' (an uncalibrated row's, or a
 * group without a preset or with its own efficiency, the a100's).  *out
 * (when not NULL) says where it comes from, in words. */
double ppcc_device_tie_band(char *out, size_t size, const ppcc_cluster *cl);

#endif
