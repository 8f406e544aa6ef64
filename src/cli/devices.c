/*
 * devices.c - the `ppcc devices` command: the device catalogue
 * (src/cost/devices.c) as a table, or as JSON with -f json.
 *
 *   ppcc devices [-f|--format text|json]
 *
 * The options and the output are catalogue.c's.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ppcc.h"
#include "cli/cli.h"

/* x in fmt, or "-" when 0 (not published, or none). */
static void figure(char *buf, size_t cap, const char *fmt, double x)
{
	if (x > 0)
		snprintf(buf, cap, fmt, x);
	else
		snprintf(buf, cap, "-");
}

static void devices_text(FILE *f)
{
	fprintf(f, "%-10s %7s %7s %7s %6s %5s %4s %5s %4s %5s %5s  %s\n",
		"preset", "BF16", "FP8", "TF32", "GiB", "GB/s", "node", "link",
		"net", "sharp", "eff", "device");
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		char fp8[16], tf32[16], net[16];
		figure(fp8, sizeof fp8, "%.1f", p->fp8);
		figure(tf32, sizeof tf32, "%.1f", p->tf32);
		figure(net, sizeof net, "%g", p->inter_gb_s);
		fprintf(f, "%-10s %7.1f %7s %7s %6g %5g %4d %5g %4s %5s %4.2f%s  %s\n",
			p->name, p->bf16, fp8, tf32, p->memory_gib,
			p->memory_gb_s, p->node_devices, p->intra_gb_s, net,
			p->nvls ? "yes" : "-", p->efficiency,
			p->calibration ? " " : "*", p->label);
	}
	fputs("\nBF16, FP8, TF32: dense peak TFLOP/s (no sparsity; - none or not\n"
	      "published).  GiB, GB/s: the memory the device reports and its\n"
	      "bandwidth.  node: devices of the usual node; link, net: each\n"
	      "device's link inside the node and its network, GB/s one way (- no\n"
	      "usual system: ppcc's default, 25).  sharp: NVLink SHARP in the\n"
	      "node, which NCCL's NVLS algorithms use.  eff: the fraction of the\n"
	      "BF16 peak a model's layers reach, the constant every estimate\n"
	      "rests on.\n",
	      f);
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		if (p->calibration)
			fprintf(f, "%s: calibrated on %s, %d runs fitted; %.1f%% "
				"off on average (at most %.1f%%) on %d held out;\n"
				"  configurations tie within %.1f%% (the median "
				"difference of two runs' errors)\n",
				p->name, p->calibration, p->fitted_runs,
				p->held_error, p->held_worst, p->held_runs,
				p->tie_band);
	}
	fprintf(f, "*: uncalibrated, no published run calibrates it yet: %s;\n"
		"  configurations tie within the a100's %.1f%%\n",
		PPCC_UNCALIBRATED_WHY, PPCC_UNCALIBRATED_TIE_BAND);
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		if (p->fp8_calibration)
			fprintf(f, "%s in FP8: its FP8 products run %.2f times as "
				"fast as its 16-bit ones, fitted on %s, %d runs;\n"
				"  %.1f%% off on average (at most %.1f%%) on %d "
				"held out\n", p->name, p->fp8_gain,
				p->fp8_calibration, p->fp8_fitted,
				p->fp8_held_error, p->fp8_held_worst,
				p->fp8_held);
	}
	fputs("Other FP8 devices run FP8 at their efficiency of the FP8 peak,\n"
	      "which no published run checks.\n", f);
	fputs("Attention's flash kernels, measured TFLOP/s forward/backward "
	      "(causal, head\nwidth 128; the backward counted as 2.5 forwards) "
	      "at 512, 1k, 2k, 4k, 8k\nand 16k tokens:\n", f);
	static const char *const kernel[] = {"", "FlashAttention-2", "cuDNN"};
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		int any = 0;
		for (int k = PPCC_ATTN_FA2; k <= PPCC_ATTN_CUDNN; k++) {
			double af, ab;
			if (!ppcc_device_attention(&af, &ab, p, k, 0))
				continue;
			fprintf(f, "  %-10s %-16s", any ? "" : p->name, kernel[k]);
			for (int j = 0; j < PPCC_ATTN_LENS; j++) {
				ppcc_device_attention(&af, &ab, p, k, j);
				fprintf(f, " %.0f/%.0f", af, ab);
			}
			fputc('\n', f);
			any = 1;
		}
	}
	fputs("  others at the matrix products' rate (doc/design/attention.md)."
	      "\n", f);
	fputs("Sources for every figure: doc/design/devices.md.  Name one with\n"
	      "`device: NAME` or `device: {preset: NAME, memory_gib: 95}` (ppcc(5)).\n",
	      f);
}

static json_t *devices_json(void)
{
	json_t *list = json_array();
	for (int i = 0; list && i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		json_t *o = json_pack(
			"{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:f, s:b, s:f,"
			" s:s?, s:i, s:i, s:f, s:f, s:f, s:f, s:s?, s:i, s:i, s:f,"
			" s:f}",
			"name", p->name, "device", p->label, "tf32_tflops", p->tf32,
			"bf16_tflops", p->bf16, "fp8_tflops", p->fp8, "memory_gib",
			p->memory_gib, "memory_gb_s", p->memory_gb_s,
			"node_devices", p->node_devices, "intra_node_gb_s",
			p->intra_gb_s, "inter_node_gb_s", p->inter_gb_s,
			"nvlink_sharp", p->nvls != 0, "efficiency", p->efficiency, "calibration", p->calibration,
			"fitted_runs", p->fitted_runs, "held_runs", p->held_runs,
			"held_error_pct", p->held_error, "held_worst_pct",
			p->held_worst, "tie_band_pct", p->tie_band,
			"fp8_gain", ppcc_device_preset_fp8_gain(p, NULL),
			"fp8_calibration", p->fp8_calibration,
			"fp8_fitted_runs", p->fp8_fitted, "fp8_held_runs",
			p->fp8_held, "fp8_held_error_pct", p->fp8_held_error,
			"fp8_held_worst_pct", p->fp8_held_worst);
		json_t *at = json_object(), *lens = json_array();
		for (int j = 0; lens && j < PPCC_ATTN_LENS; j++)
			json_array_append_new(lens, json_integer(
				(json_int_t)ppcc_attn_lens[j]));
		if (at)
			json_object_set_new(at, "lengths", lens);
		else
			json_decref(lens);
		for (int k = PPCC_ATTN_FA2; at && k <= PPCC_ATTN_CUDNN; k++) {
			double af, ab;
			json_t *v = json_null();
			if (ppcc_device_attention(&af, &ab, p, k, 0)) {
				json_t *fw = json_array(), *bw = json_array();
				for (int j = 0; j < PPCC_ATTN_LENS; j++) {
					ppcc_device_attention(&af, &ab, p, k, j);
					json_array_append_new(fw, json_real(af));
					json_array_append_new(bw, json_real(ab));
				}
				v = json_pack("{s:o, s:o}", "forward", fw,
					      "backward", bw);
			}
			json_object_set_new(at, k == PPCC_ATTN_FA2 ? "fa2"
					    : "cudnn", v);
		}
		if (!o || !at || json_object_set_new(o, "attention_tflops",
						     at) < 0 ||
		    json_object_set_new(o, "compute_capability", p->arch
					? json_integer(p->arch)
					: json_null()) < 0) {
			if (!o)
				json_decref(at);
			json_decref(o);
			o = NULL;
		}
		if (!o || json_array_append_new(list, o) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

int ppcc_cli_devices(int argc, char **argv)
{
	static const ppcc_cli_catalogue c = {"devices", devices_text,
					       devices_json, 10};
	return ppcc_cli_catalogue_run(&c, argc, argv);
}
