/*
 * emit/html.c - the simulated step as one self-contained HTML page: a
 * timeline that pans (drag, arrows) and zooms (wheel, +/-, buttons),
 * drawn on a canvas by the page's own script, the lines below.
 *
 * The page holds its CSS, its script and the plan's data and nothing
 * else: no URL, font or request (its Content-Security-Policy forbids
 * them; the script has block comments only, so no "//" appears), so it
 * opens from a file with the network off.  The data, a JSON object in a
 * <script type="application/json">: the plan's shape and figures, each
 * op's name and kind, per rank its actions in list order (op, stage, mb,
 * chunk, peer, start ms, end ms, bytes; times replayed from the
 * simulation as the Chrome trace's are) and its data-parallel lane
 * (ppcc_lanes_build: every collective the text report counts).  The
 * script draws a row per rank: computes coloured by op, labelled with
 * their microbatch where wide enough, an overlapped pair bracketed,
 * sends, receives and the lane in thin strips below; hovering names an
 * action.  Its first drawing (the whole step) writes the count of actions
 * drawn into #ppcc-drawn, which tests/html/check.sh reads back.
 * Contract: same plan, same bytes, in any locale; strings are escaped to
 * ASCII with '<', '>', '&', '/', ':' and '=' escaped too, so that no name
 * can end the script or spell an address; bad times: PPCC_EINTERNAL.
 * Limits: the page holds every action (about 36 bytes each) and the
 * browser draws those in view at each frame.  doc/design/html.md.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/json_write.h"
#include "ppcc.h"

/* Digits of a time in ms: a microsecond's resolution up to 1000 s. */
#define HTML_TIME_DIGITS 10

/* The page up to its data, then its script (one string a line). */
static const char *const html_head[] = {
	"<!DOCTYPE html>\n",
	"<html lang=\"en\">\n",
	"<head>\n",
	"<meta charset=\"utf-8\">\n",
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n",
	"<meta name=\"viewport\" content=\"width=device-width\">\n",
	"<title>ppcc timeline</title>\n",
	"<style>\n",
	"body{margin:0;font:13px/1.4 sans-serif;color:#1a1a1a;background:#fff}\n",
	"header{padding:6px 10px 4px;border-bottom:1px solid #ccc}\n",
	"h1{font-size:15px;margin:0}\n",
	"#bar{margin-top:4px}\n",
	"#bar button{font:inherit;min-width:28px;margin-right:2px}\n",
	"#legend span{margin-right:12px;white-space:nowrap}\n",
	"#legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;box-sizing:border-box}\n",
	"#view{position:relative;overflow:hidden;cursor:grab;user-select:none}\n",
	"#tl{display:block}\n",
	"#tip{position:absolute;display:none;pointer-events:none;background:#ffffe8;border:1px solid #888;padding:3px 6px;white-space:pre;font:12px monospace}\n",
	"footer{padding:4px 10px;color:#555}\n",
	"</style>\n",
	"</head>\n",
	"<body>\n",
	"<header>\n",
	"<h1 id=\"title\">ppcc timeline</h1>\n",
	"<div id=\"figures\"></div>\n",
	"<div id=\"bar\"><button id=\"zin\" title=\"zoom in (+)\">+</button><button id=\"zout\" title=\"zoom out (-)\">&minus;</button><button id=\"fit\" title=\"the whole step (0)\">fit</button><button id=\"left\" title=\"earlier (left arrow)\">&larr;</button><button id=\"right\" title=\"later (right arrow)\">&rarr;</button> <span id=\"range\"></span>; drag to pan, wheel to zoom, hover for details</div>\n",
	"<div id=\"legend\"></div>\n",
	"</header>\n",
	"<div id=\"view\"><canvas id=\"tl\"></canvas><div id=\"tip\"></div></div>\n",
	"<footer>drawn <output id=\"ppcc-drawn\">0</output> of <output id=\"ppcc-actions\">0</output> actions, and <output id=\"ppcc-lanes\">0</output> data-parallel collectives that the schedule does not hold but the iteration counts; written by ppcc</footer>\n",
	"<noscript>This timeline is drawn by its script: enable JavaScript.</noscript>\n",
	"<script type=\"application/json\" id=\"ppcc-plan\">\n",
};

static const char *const html_script[] = {
	"(function () {\n",
	"\"use strict\";\n",
	"var P = JSON.parse(document.getElementById(\"ppcc-plan\").textContent);\n",
	"var NF = 8, NL = 8, TOP = 24, LEFT = 70, ROW = 52, LANE_Y = [4, 31, 36, 43],\n",
	"    LANE_H = [24, 4, 4, 6];\n",
	"var FILL = {F: \"#4e79a7\", B: \"#59a14f\", I: \"#f28e2b\", W: \"#b07aa1\",\n",
	"\tsend: \"#7f7f7f\", recv: \"#bdbdbd\", reduce: \"#e15759\",\n",
	"\tgather: \"#edc948\", pair: \"#1a1a1a\"};\n",
	"var view = document.getElementById(\"view\"), cv = document.getElementById(\"tl\"),\n",
	"    tip = document.getElementById(\"tip\"), cx = cv.getContext(\"2d\");\n",
	"var R = P.rows.length, end = P.step_ms > 0 ? P.step_ms : 1;\n",
	"var V = {t0: 0, s: 1}, first = true, drag = null;\n",
	"var total = 0, cover = [], r, k;\n",
	"for (r = 0; r < R; r++)\n",
	"\ttotal += P.rows[r].length / NF;\n",
	"/* the schedule's collectives are drawn in the lanes, at the times the\n",
	"   text report counts */\n",
	"for (r = 0; r < R; r++) {\n",
	"\tcover.push({});\n",
	"\tfor (k = 0; k < P.lanes[r].length; k += NL)\n",
	"\t\tif (P.lanes[r][k + 4] >= 0)\n",
	"\t\t\tcover[r][P.lanes[r][k + 4]] = 1;\n",
	"}\n",
	"for (r = 0; r < R; r++)\n",
	"\tfor (k = 0; k < P.rows[r].length; k += NF)\n",
	"\t\tif (P.rows[r][k + 6] > end)\n",
	"\t\t\tend = P.rows[r][k + 6];\n",
	"for (r = 0; r < R; r++)\n",
	"\tfor (k = 0; k < P.lanes[r].length; k += NL)\n",
	"\t\tif (P.lanes[r][k + 6] > end)\n",
	"\t\t\tend = P.lanes[r][k + 6];\n",
	"document.getElementById(\"ppcc-actions\").textContent = String(total);\n",
	"/* the median compute's length: below a label's width, say to zoom */\n",
	"var lens = [];\n",
	"for (r = 0; r < R; r++)\n",
	"\tfor (k = 0; k < P.rows[r].length; k += NF)\n",
	"\t\tif (P.kinds[P.rows[r][k]] === \"compute\")\n",
	"\t\t\tlens.push(P.rows[r][k + 6] - P.rows[r][k + 5]);\n",
	"lens.sort(function (a, b) { return a - b; });\n",
	"var median = lens.length ? lens[lens.length >> 1] : 0;\n",
	"\n",
	"function kind(op) { return P.kinds[op]; }\n",
	"/* the lane of an op: 0 compute, 1 sends, 2 receives, 3 collectives */\n",
	"function lane(op) {\n",
	"\tvar k = kind(op);\n",
	"\treturn k === \"compute\" || k === \"pair\" ? 0 : k === \"send\" ? 1 :\n",
	"\t\tk === \"recv\" ? 2 : 3;\n",
	"}\n",
	"function mix(hex, t) {\n",
	"\tvar c = parseInt(hex.slice(1), 16), o = \"#\";\n",
	"\t[16, 8, 0].forEach(function (sh) {\n",
	"\t\tvar v = (c >> sh) & 255;\n",
	"\t\tv = Math.round(v + (255 - v) * t);\n",
	"\t\to += (v < 16 ? \"0\" : \"\") + v.toString(16);\n",
	"\t});\n",
	"\treturn o;\n",
	"}\n",
	"function fill(op, chunk) {\n",
	"\tvar k = kind(op), name = P.ops[op];\n",
	"\tif (k === \"compute\") {\n",
	"\t\tvar t = P.chunks > 1 ? 0.6 * chunk / (P.chunks - 1) : 0;\n",
	"\t\treturn mix(FILL[name] || FILL.F, Math.min(Math.max(t, 0), 0.6));\n",
	"\t}\n",
	"\treturn FILL[k] || FILL.reduce;\n",
	"}\n",
	"function ink(hex) {\n",
	"\tvar c = parseInt(hex.slice(1), 16);\n",
	"\tvar y = 0.299 * ((c >> 16) & 255) + 0.587 * ((c >> 8) & 255) +\n",
	"\t\t0.114 * (c & 255);\n",
	"\treturn y < 150 ? \"#ffffff\" : \"#1a1a1a\";\n",
	"}\n",
	"function plotW() { return Math.max(cv.clientWidth - LEFT - 10, 50); }\n",
	"function fit() { V.t0 = 0; V.s = plotW() / end; }\n",
	"function clamp() {\n",
	"\tvar lo = plotW() / end / 4, hi = plotW() / 1e-4;\n",
	"\tV.s = Math.min(Math.max(V.s, lo), hi);\n",
	"\tvar span = plotW() / V.s;\n",
	"\tV.t0 = Math.min(Math.max(V.t0, -span / 2), end - span / 2);\n",
	"}\n",
	"function fmt(ms, d) { return ms.toFixed(Math.max(0, Math.min(d, 6))); }\n",
	"function step() {\n",
	"\tvar raw = 90 / V.s, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));\n",
	"\tvar m = raw / p;\n",
	"\treturn (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;\n",
	"}\n",
	"\n",
	"function draw() {\n",
	"\tvar dpr = window.devicePixelRatio || 1, w = view.clientWidth,\n",
	"\t    h = TOP + R * ROW + 6;\n",
	"\tcv.style.width = w + \"px\";\n",
	"\tcv.style.height = h + \"px\";\n",
	"\tcv.width = Math.round(w * dpr);\n",
	"\tcv.height = Math.round(h * dpr);\n",
	"\tif (first) {\n",
	"\t\tfit();\n",
	"\t\tvar m = /^#([0-9.]+):([0-9.]+)$/.exec(location.hash);\n",
	"\t\tif (m && +m[2] > +m[1]) {\n",
	"\t\t\tV.t0 = +m[1];\n",
	"\t\t\tV.s = plotW() / (m[2] - m[1]);\n",
	"\t\t}\n",
	"\t}\n",
	"\tclamp();\n",
	"\tcx.setTransform(dpr, 0, 0, dpr, 0, 0);\n",
	"\tcx.fillStyle = \"#ffffff\";\n",
	"\tcx.fillRect(0, 0, w, h);\n",
	"\tcx.font = \"11px sans-serif\";\n",
	"\tcx.textBaseline = \"middle\";\n",
	"\tvar r, k, st = step(), d = Math.max(0, -Math.floor(Math.log(st) / Math.LN10 + 1e-9)),\n",
	"\t    t1 = V.t0 + (w - LEFT) / V.s;\n",
	"\tfor (r = 0; r < R; r++) {\n",
	"\t\tcx.fillStyle = r % 2 ? \"#ffffff\" : \"#f4f4f4\";\n",
	"\t\tcx.fillRect(0, TOP + r * ROW, w, ROW);\n",
	"\t\tcx.fillStyle = \"#1a1a1a\";\n",
	"\t\tcx.textAlign = \"left\";\n",
	"\t\tcx.fillText(\"rank \" + r, 6, TOP + r * ROW + LANE_Y[0] + LANE_H[0] / 2);\n",
	"\t\tcx.fillStyle = \"#777777\";\n",
	"\t\tcx.font = \"9px sans-serif\";\n",
	"\t\tcx.textAlign = \"right\";\n",
	"\t\tcx.fillText(\"p2p\", LEFT - 4, TOP + r * ROW + 35.5);\n",
	"\t\tcx.fillText(\"dp\", LEFT - 4, TOP + r * ROW + 46);\n",
	"\t\tcx.font = \"11px sans-serif\";\n",
	"\t}\n",
	"\tcx.textAlign = \"center\";\n",
	"\tfor (var t = Math.ceil(V.t0 / st) * st; t <= t1; t += st) {\n",
	"\t\tvar x = LEFT + (t - V.t0) * V.s;\n",
	"\t\tcx.fillStyle = \"#dddddd\";\n",
	"\t\tcx.fillRect(Math.round(x), TOP, 1, R * ROW);\n",
	"\t\tcx.fillStyle = \"#1a1a1a\";\n",
	"\t\tcx.fillText(fmt(t, d), x, TOP / 2);\n",
	"\t}\n",
	"\tcx.save();\n",
	"\tcx.beginPath();\n",
	"\tcx.rect(LEFT, 0, w - LEFT, h);\n",
	"\tcx.clip();\n",
	"\tcx.font = \"9px sans-serif\";\n",
	"\tvar small9 = cx.measureText(\"0\").width;\n",
	"\tcx.font = \"11px sans-serif\";\n",
	"\tvar digit = cx.measureText(\"0\").width, drawn = 0, lanes = 0;\n",
	"\tfor (r = 0; r < R; r++) {\n",
	"\t\tvar row = P.rows[r], y = TOP + r * ROW;\n",
	"\t\tfor (k = 0; k < row.length; k += NF) {\n",
	"\t\t\tvar op = row[k], a = row[k + 5], b = row[k + 6], kd = kind(op);\n",
	"\t\t\tif (kd === \"pair\") {\n",
	"\t\t\t\tif (k + 2 * NF < row.length) {\n",
	"\t\t\t\t\ta = row[k + NF + 5];\n",
	"\t\t\t\t\tb = row[k + 2 * NF + 6];\n",
	"\t\t\t\t}\n",
	"\t\t\t}\n",
	"\t\t\tif (b < V.t0 || a > t1 || cover[r][k / NF])\n",
	"\t\t\t\tcontinue;\n",
	"\t\t\tvar x0 = LEFT + (a - V.t0) * V.s, ww = Math.max((b - a) * V.s, 1),\n",
	"\t\t\t    ln = lane(op), yy = y + LANE_Y[ln], hh = LANE_H[ln];\n",
	"\t\t\tdrawn++;\n",
	"\t\t\tif (kd === \"pair\") {\n",
	"\t\t\t\tcx.fillStyle = FILL.pair;\n",
	"\t\t\t\tcx.fillRect(x0, yy - 3, ww, 2);\n",
	"\t\t\t\tcx.fillRect(x0, yy - 3, 1, 5);\n",
	"\t\t\t\tcx.fillRect(x0 + ww - 1, yy - 3, 1, 5);\n",
	"\t\t\t\tcontinue;\n",
	"\t\t\t}\n",
	"\t\t\tvar f = fill(op, row[k + 3]);\n",
	"\t\t\tcx.fillStyle = f;\n",
	"\t\t\tcx.fillRect(x0, yy, ww > 4 ? ww - 1 : ww, hh);\n",
	"\t\t\tif (ln === 0) {\n",
	"\t\t\t\tvar label = String(row[k + 2]), small =\n",
	"\t\t\t\t\tww < digit * label.length + 4;\n",
	"\t\t\t\tif (!small || ww >= small9 * label.length + 2) {\n",
	"\t\t\t\t\tcx.fillStyle = ink(f);\n",
	"\t\t\t\t\tif (small)\n",
	"\t\t\t\t\t\tcx.font = \"9px sans-serif\";\n",
	"\t\t\t\t\tcx.fillText(label, x0 + ww / 2, yy + hh / 2);\n",
	"\t\t\t\t\tif (small)\n",
	"\t\t\t\t\t\tcx.font = \"11px sans-serif\";\n",
	"\t\t\t\t}\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\tvar ls = P.lanes[r];\n",
	"\t\tfor (k = 0; k < ls.length; k += NL) {\n",
	"\t\t\tif (ls[k + 6] < V.t0 || ls[k + 5] > t1)\n",
	"\t\t\t\tcontinue;\n",
	"\t\t\tcx.fillStyle = fill(ls[k], 0);\n",
	"\t\t\tcx.fillRect(LEFT + (ls[k + 5] - V.t0) * V.s, y + LANE_Y[3],\n",
	"\t\t\t\t    Math.max((ls[k + 6] - ls[k + 5]) * V.s, 1), LANE_H[3]);\n",
	"\t\t\tif (ls[k + 4] >= 0)\n",
	"\t\t\t\tdrawn++;\n",
	"\t\t\telse\n",
	"\t\t\t\tlanes++;\n",
	"\t\t}\n",
	"\t}\n",
	"\tcx.restore();\n",
	"\tcx.fillStyle = \"#1a1a1a\";\n",
	"\tcx.textAlign = \"left\";\n",
	"\tcx.fillText(\"ms\", 6, TOP / 2);\n",
	"\tdocument.getElementById(\"range\").textContent = fmt(Math.max(V.t0, 0), d) +\n",
	"\t\t\"\\u2013\" + fmt(Math.min(t1, end), d) + \" ms of \" + fmt(end, 1) + \" ms\" +\n",
	"\t\t(median * V.s < 14 ? \" (zoom in to read the microbatches)\" : \"\");\n",
	"\tif (first) {\n",
	"\t\tdocument.getElementById(\"ppcc-drawn\").textContent = String(drawn);\n",
	"\t\tdocument.getElementById(\"ppcc-lanes\").textContent = String(lanes);\n",
	"\t\tfirst = false;\n",
	"\t}\n",
	"}\n",
	"\n",
	"function at(ev) {\n",
	"\tvar b = cv.getBoundingClientRect();\n",
	"\treturn {x: ev.clientX - b.left, y: ev.clientY - b.top};\n",
	"}\n",
	"/* the action under (x, y): rank, lane and the nearest box within 3 px */\n",
	"function hit(p) {\n",
	"\tvar r = Math.floor((p.y - TOP) / ROW);\n",
	"\tif (r < 0 || r >= R || p.x < LEFT)\n",
	"\t\treturn null;\n",
	"\tvar dy = p.y - TOP - r * ROW, ln = -1, k, best = null, bd = 3;\n",
	"\tfor (k = 0; k < 4; k++)\n",
	"\t\tif (dy >= LANE_Y[k] - 1 && dy <= LANE_Y[k] + LANE_H[k] + 1)\n",
	"\t\t\tln = k;\n",
	"\tif (ln < 0)\n",
	"\t\treturn null;\n",
	"\tvar t = V.t0 + (p.x - LEFT) / V.s, row = P.rows[r];\n",
	"\tfor (k = 0; k < row.length; k += NF) {\n",
	"\t\tvar op = row[k];\n",
	"\t\tif (kind(op) === \"pair\" || lane(op) !== ln || cover[r][k / NF])\n",
	"\t\t\tcontinue;\n",
	"\t\tvar dd = Math.max(row[k + 5] - t, t - row[k + 6], 0) * V.s;\n",
	"\t\tif (dd < bd) {\n",
	"\t\t\tbd = dd;\n",
	"\t\t\tbest = {r: r, k: k};\n",
	"\t\t}\n",
	"\t}\n",
	"\tvar ls = P.lanes[r];\n",
	"\tfor (k = 0; ln === 3 && k < ls.length; k += NL) {\n",
	"\t\tvar de = Math.max(ls[k + 5] - t, t - ls[k + 6], 0) * V.s;\n",
	"\t\tif (de < bd) {\n",
	"\t\t\tbd = de;\n",
	"\t\t\tbest = {r: r, lane: k};\n",
	"\t\t}\n",
	"\t}\n",
	"\treturn best;\n",
	"}\n",
	"function mib(b) {\n",
	"\treturn b >= 1048576 ? fmt(b / 1048576, 2) + \" MiB\" : b + \" bytes\";\n",
	"}\n",
	"function describe(h) {\n",
	"\tvar s, a, b;\n",
	"\tif (h.lane !== undefined) {\n",
	"\t\tvar ls = P.lanes[h.r], j = h.lane;\n",
	"\t\ta = ls[j + 5];\n",
	"\t\tb = ls[j + 6];\n",
	"\t\ts = \"rank \" + h.r + \": \" + P.ops[ls[j]] + \" stage \" + ls[j + 1] +\n",
	"\t\t\t\" bucket \" + ls[j + 2] + \", \" + mib(ls[j + 7]) +\n",
	"\t\t\t\" over the data-parallel group\";\n",
	"\t\tif (ls[j + 4] < 0)\n",
	"\t\t\ts += \"\\nnot in the schedule: \" + (ls[j + 3] >= 0 ?\n",
	"\t\t\t\t\"after the backward of mb \" + ls[j + 3] :\n",
	"\t\t\t\t\"after the optimizer step\") +\n",
	"\t\t\t\t\", as the iteration counts it\";\n",
	"\t} else {\n",
	"\t\tvar row = P.rows[h.r], k = h.k, op = row[k], kd = kind(op);\n",
	"\t\ta = row[k + 5];\n",
	"\t\tb = row[k + 6];\n",
	"\t\ts = \"rank \" + h.r + \": \" + P.ops[op] + \" stage \" + row[k + 1] +\n",
	"\t\t\t(kd === \"reduce\" || kd === \"gather\" ? \" bucket \" : \" mb \") + row[k + 2];\n",
	"\t\tif (P.chunks > 1)\n",
	"\t\t\ts += \" chunk \" + row[k + 3];\n",
	"\t\tif (kd === \"send\" || kd === \"recv\")\n",
	"\t\t\ts += (kd === \"send\" ? \" to\" : \" from\") + \" rank \" + row[k + 4];\n",
	"\t\tif (row[k + 7] > 0)\n",
	"\t\t\ts += \", \" + mib(row[k + 7]);\n",
	"\t\tvar o = k >= NF && kind(row[k - NF]) === \"pair\" ? k + NF :\n",
	"\t\t\tk >= 2 * NF && kind(row[k - 2 * NF]) === \"pair\" ? k - NF : -1;\n",
	"\t\tif (o >= 0 && o < row.length)\n",
	"\t\t\ts += \"\\noverlapped with \" + P.ops[row[o]] + \" stage \" +\n",
	"\t\t\t\trow[o + 1] + \" mb \" + row[o + 2];\n",
	"\t}\n",
	"\treturn s + \"\\n\" + fmt(a, 3) + \"\\u2013\" + fmt(b, 3) + \" ms (\" +\n",
	"\t\tfmt(b - a, 3) + \" ms)\";\n",
	"}\n",
	"\n",
	"view.addEventListener(\"mousedown\", function (ev) {\n",
	"\tdrag = {x: ev.clientX, t0: V.t0};\n",
	"\tview.style.cursor = \"grabbing\";\n",
	"\tev.preventDefault();\n",
	"});\n",
	"window.addEventListener(\"mouseup\", function () {\n",
	"\tdrag = null;\n",
	"\tview.style.cursor = \"\";\n",
	"});\n",
	"view.addEventListener(\"mousemove\", function (ev) {\n",
	"\tif (drag) {\n",
	"\t\tV.t0 = drag.t0 - (ev.clientX - drag.x) / V.s;\n",
	"\t\ttip.style.display = \"none\";\n",
	"\t\tdraw();\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tvar p = at(ev), h = hit(p);\n",
	"\tif (!h) {\n",
	"\t\ttip.style.display = \"none\";\n",
	"\t\treturn;\n",
	"\t}\n",
	"\ttip.textContent = describe(h);\n",
	"\ttip.style.display = \"block\";\n",
	"\ttip.style.left = Math.min(p.x + 14, view.clientWidth - tip.offsetWidth - 4) + \"px\";\n",
	"\ttip.style.top = p.y + 16 + \"px\";\n",
	"});\n",
	"view.addEventListener(\"mouseleave\", function () { tip.style.display = \"none\"; });\n",
	"function zoom(f, x) {\n",
	"\tvar t = V.t0 + (x - LEFT) / V.s;\n",
	"\tV.s *= f;\n",
	"\tclamp();\n",
	"\tV.t0 = t - (x - LEFT) / V.s;\n",
	"\tdraw();\n",
	"}\n",
	"view.addEventListener(\"wheel\", function (ev) {\n",
	"\tev.preventDefault();\n",
	"\tzoom(Math.exp(-ev.deltaY * 0.002), at(ev).x);\n",
	"}, {passive: false});\n",
	"function button(id, f) { document.getElementById(id).addEventListener(\"click\", f); }\n",
	"function mid() { return LEFT + plotW() / 2; }\n",
	"button(\"zin\", function () { zoom(2, mid()); });\n",
	"button(\"zout\", function () { zoom(0.5, mid()); });\n",
	"button(\"fit\", function () { fit(); draw(); });\n",
	"button(\"left\", function () { V.t0 -= plotW() / V.s / 2; draw(); });\n",
	"button(\"right\", function () { V.t0 += plotW() / V.s / 2; draw(); });\n",
	"window.addEventListener(\"keydown\", function (ev) {\n",
	"\tvar m = {\"+\": 2, \"=\": 2, \"-\": 0.5};\n",
	"\tif (m[ev.key])\n",
	"\t\tzoom(m[ev.key], mid());\n",
	"\telse if (ev.key === \"0\") {\n",
	"\t\tfit();\n",
	"\t\tdraw();\n",
	"\t} else if (ev.key === \"ArrowLeft\" || ev.key === \"ArrowRight\") {\n",
	"\t\tV.t0 += (ev.key === \"ArrowLeft\" ? -1 : 1) * plotW() / V.s / 4;\n",
	"\t\tdraw();\n",
	"\t}\n",
	"});\n",
	"window.addEventListener(\"resize\", draw);\n",
	"\n",
	"document.title = P.model + \": \" + P.schedule + \" timeline (ppcc)\";\n",
	"document.getElementById(\"title\").textContent = P.model;\n",
	"document.getElementById(\"figures\").textContent = P.schedule + \", \" + R +\n",
	"\t(R === 1 ? \" rank\" : \" ranks\") + \" x \" + P.chunks +\n",
	"\t(P.chunks === 1 ? \" chunk\" : \" chunks\") + \", \" + P.microbatches +\n",
	"\t\" microbatches: step \" + fmt(P.step_ms, 1) + \" ms\" +\n",
	"\t(P.bubble >= 0 ? \", bubble \" + fmt(100 * P.bubble, 1) + \"%\" : \"\") +\n",
	"\t(P.iteration_ms > 0 ? \", iteration \" + fmt(P.iteration_ms, 1) + \" ms\" : \"\");\n",
	"var lg = document.getElementById(\"legend\"), seen = {};\n",
	"function key(name, color, outline) {\n",
	"\tvar s = document.createElement(\"span\"), b = document.createElement(\"i\");\n",
	"\tb.style.background = outline ? \"none\" : color;\n",
	"\tif (outline)\n",
	"\t\tb.style.border = \"2px solid \" + color;\n",
	"\ts.appendChild(b);\n",
	"\ts.appendChild(document.createTextNode(name));\n",
	"\tlg.appendChild(s);\n",
	"}\n",
	"var words = {F: \"forward\", B: \"backward\", I: \"input gradient\",\n",
	"\tW: \"weight gradient\"};\n",
	"for (r = 0; r < R; r++)\n",
	"\tfor (k = 0; k < P.rows[r].length; k += NF)\n",
	"\t\tseen[P.rows[r][k]] = 1;\n",
	"P.ops.forEach(function (name, op) {\n",
	"\tif (seen[op] && kind(op) === \"compute\")\n",
	"\t\tkey(words[name] || name, FILL[name] || FILL.F);\n",
	"});\n",
	"if (seen[P.ops.indexOf(\"SEND_F\")] || seen[P.ops.indexOf(\"SEND_B\")])\n",
	"\tkey(\"send\", FILL.send);\n",
	"if (seen[P.ops.indexOf(\"RECV_F\")] || seen[P.ops.indexOf(\"RECV_B\")])\n",
	"\tkey(\"receive\", FILL.recv);\n",
	"var red = false, gat = false;\n",
	"P.ops.forEach(function (name, op) {\n",
	"\tred = red || (seen[op] && kind(op) === \"reduce\");\n",
	"\tgat = gat || (seen[op] && kind(op) === \"gather\");\n",
	"});\n",
	"for (r = 0; r < R; r++)\n",
	"\tfor (k = 0; k < P.lanes[r].length; k += NL) {\n",
	"\t\tgat = gat || kind(P.lanes[r][k]) === \"gather\";\n",
	"\t\tred = red || kind(P.lanes[r][k]) === \"reduce\";\n",
	"\t}\n",
	"if (red)\n",
	"\tkey(\"gradient reduction\", FILL.reduce);\n",
	"if (gat)\n",
	"\tkey(\"parameter gather\", FILL.gather);\n",
	"if (seen[P.ops.indexOf(\"OVERLAP_F_B\")])\n",
	"\tkey(\"overlapped F and B (bracket above)\", FILL.pair, true);\n",
	"if (P.chunks > 1)\n",
	"\tkey(\"later chunks lighter\", mix(FILL.F, 0.6));\n",
	"draw();\n",
	"}());\n",
};

static void put_lines(ppcc_jw *w, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ppcc_jw_raw(w, lines[i]);
}

static void put_u16(ppcc_jw *w, unsigned u)
{
	char e[8];
	snprintf(e, sizeof e, "\\u%04x", u & 0xffff);
	ppcc_jw_raw_n(w, e, 6);
}

/* A JSON string of s in ASCII that is safe inside a script element and
 * spells no address: letters, digits and harmless punctuation as they
 * are, everything else (quotes, '<', '>', '&', '/', ':', '=', controls,
 * past ASCII) as \uXXXX, a byte that is not UTF-8 as U+FFFD. */
static void html_string(ppcc_jw *w, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	ppcc_jw_raw_n(w, "\"", 1);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = ppcc_utf8_decode(u + i, n - i, &cp);
		if (!len)
			cp = 0xfffd, len = 1;
		i += len;
		if ((cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= 'a' && cp <= 'z') ||
		    (cp >= 0x20 && cp < 0x7f && strchr(" -_.,;()[]{}+*#%!?@|~^$", (int)cp))) {
			char c = (char)cp;
			ppcc_jw_raw_n(w, &c, 1);
		} else if (cp < 0x10000) {
			put_u16(w, cp);
		} else {
			cp -= 0x10000;
			put_u16(w, 0xd800 + (cp >> 10));
			put_u16(w, 0xdc00 + (cp & 0x3ff));
		}
	}
	ppcc_jw_raw_n(w, "\"", 1);
}

/* What the page draws an op as: its lane and colour. */
static const char *op_kind(int op)
{
	if (op == PPCC_OP_OVERLAP_F_B)
		return "pair";
	if (ppcc_op_is_compute(op))
		return "compute";
	if (ppcc_op_is_comm(op))
		return ppcc_op_table[op].send ? "send" : "recv";
	return ppcc_op_is_reduction(op) ? "reduce" : "gather";
}

static int stage_chunk_of(const ppcc_schedule *s, int stage)
{
	return s->stages && stage >= 0 && stage < s->n_stages
		       ? s->stages[stage].chunk
		       : s->n_ranks > 0 ? stage / s->n_ranks : 0;
}

static void put_time(ppcc_jw *w, double ms)
{
	ppcc_jw_real(w, ms, HTML_TIME_DIGITS);
}

static int put_header(ppcc_jw *w, const ppcc_plan *p, const ppcc_schedule *s,
		      const ppcc_estimate *e)
{
	ppcc_jw_raw(w, "{\"generator\":");
	html_string(w, "ppcc " PPCC_VERSION_STRING);
	ppcc_jw_raw(w, ",\"model\":");
	html_string(w, p->model_name ? p->model_name : "");
	ppcc_jw_raw(w, ",\"schedule\":");
	html_string(w, ppcc_schedule_kind_name(s->kind));
	ppcc_jw_raw(w, ",\"chunks\":");
	ppcc_jw_int(w, s->n_chunks > 0 ? s->n_chunks : 1);
	ppcc_jw_raw(w, ",\"stages\":");
	ppcc_jw_int(w, s->n_stages);
	ppcc_jw_raw(w, ",\"microbatches\":");
	ppcc_jw_int(w, s->n_microbatches);
	ppcc_jw_raw(w, ",\"step_ms\":");
	put_time(w, isfinite(e->step_ms) ? e->step_ms : 0);
	ppcc_jw_raw(w, ",\"bubble\":");
	ppcc_jw_real(w, isfinite(e->bubble_fraction) ? e->bubble_fraction : -1,
		     6);
	ppcc_jw_raw(w, ",\"iteration_ms\":");
	put_time(w, p->best.iteration && isfinite(p->best.iteration->iteration_ms)
			    ? p->best.iteration->iteration_ms : 0);
	ppcc_jw_raw(w, ",\n\"ops\":[");
	for (int op = 0; op < PPCC_OP_COUNT; op++) {
		ppcc_jw_raw(w, op ? "," : "");
		html_string(w, ppcc_op_name(op));
	}
	ppcc_jw_raw(w, "],\n\"kinds\":[");
	for (int op = 0; op < PPCC_OP_COUNT; op++) {
		ppcc_jw_raw(w, op ? "," : "");
		html_string(w, op_kind(op));
	}
	ppcc_jw_raw(w, "],\n");
	return 0;
}

/* Each rank's actions, eight numbers each, checked as they are written:
 * a known op, times that replay, finite and not backwards. */
static int put_rows(ppcc_jw *w, const ppcc_plan *p, const ppcc_schedule *s,
		    const ppcc_estimate *e, ppcc_diag *d)
{
	ppcc_jw_raw(w, "\"rows\":[");
	for (int r = 0; r < s->n_ranks && !w->err; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times tt;
		ppcc_jw_raw(w, r ? ",\n[" : "\n[");
		if (rs->n_actions < 0 ||
		    (rs->n_actions > 0 &&
		     (!rs->actions ||
		      ppcc_rank_times_begin(&tt, s, p->best.costs, e, r) < 0))) {
			ppcc_error(d, NULL, "rank %d has no action list or times", r);
			return PPCC_EINTERNAL;
		}
		for (int32_t i = 0; i < rs->n_actions && !w->err; i++) {
			const ppcc_action *a = &rs->actions[i];
			double t0, t1;
			if (a->op < 0 || a->op >= PPCC_OP_COUNT) {
				ppcc_error(d, NULL, "rank %d action %d has unknown "
					   "op %d", r, (int)i, (int)a->op);
				return PPCC_EINTERNAL;
			}
			if (ppcc_rank_times_at(&tt, i, &t0, &t1) < 0 ||
			    !isfinite(t0) || !isfinite(t1) || t1 < t0) {
				ppcc_error(d, NULL, "rank %d action %d has no "
					   "simulated times", r, (int)i);
				return PPCC_EINTERNAL;
			}
			ppcc_jw_raw(w, i ? "," : "");
			ppcc_jw_int(w, a->op);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, a->stage);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, a->mb);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, stage_chunk_of(s, a->stage));
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, a->peer);
			ppcc_jw_raw_n(w, ",", 1);
			put_time(w, t0);
			ppcc_jw_raw_n(w, ",", 1);
			put_time(w, t1);
			ppcc_jw_raw_n(w, ",", 1);
			if (a->bytes <= (uint64_t)INT64_MAX)
				ppcc_jw_int(w, (int64_t)a->bytes);
			else
				ppcc_jw_real(w, (double)a->bytes, 17);
			if (i % 8 == 7)
				ppcc_jw_raw_n(w, "\n", 1);
		}
		ppcc_jw_raw(w, "]");
	}
	ppcc_jw_raw(w, "],\n");
	return 0;
}

/* The data-parallel and ZeRO collectives of each rank as the text report
 * counts them (ppcc_lanes_build): the schedule's own, which the page
 * draws here instead of in the rows, and those it does not hold (ZeRO
 * 2's earlier reduce-scatters), eight numbers each: op, stage, bucket,
 * mb (-1), action (-1: not in the schedule), start ms, end ms, bytes. */
static int put_lanes(ppcc_jw *w, const ppcc_plan *p, const ppcc_schedule *s,
		     const ppcc_estimate *e, ppcc_diag *d)
{
	ppcc_lanes l;
	int err = ppcc_lanes_build(&l, p->config, s, p->best.costs, e);
	if (err < 0) {
		if (err != PPCC_ENOMEM)
			ppcc_error(d, NULL, "the plan's data-parallel collectives "
				   "cannot be replayed");
		return err;
	}
	ppcc_jw_raw(w, "\"lanes\":[");
	for (int r = 0; r < s->n_ranks; r++) {
		ppcc_jw_raw(w, r ? ",\n[" : "\n[");
		long from = r < l.n_ranks ? l.first[r] : 0,
		     to = r < l.n_ranks ? l.first[r + 1] : 0;
		for (long k = from; k < to; k++) {
			const ppcc_lane_op *o = &l.ops[k];
			if (!isfinite(o->start_ms) || !isfinite(o->end_ms) ||
			    o->end_ms < o->start_ms) {
				ppcc_error(d, NULL, "rank %d collective %ld has "
					   "times %g .. %g ms", r, k - from,
					   o->start_ms, o->end_ms);
				ppcc_lanes_free(&l);
				return PPCC_EINTERNAL;
			}
			ppcc_jw_raw(w, k > from ? "," : "");
			ppcc_jw_int(w, o->op);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, o->stage);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, o->bucket);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, o->mb);
			ppcc_jw_raw_n(w, ",", 1);
			ppcc_jw_int(w, o->action);
			ppcc_jw_raw_n(w, ",", 1);
			put_time(w, o->start_ms);
			ppcc_jw_raw_n(w, ",", 1);
			put_time(w, o->end_ms);
			ppcc_jw_raw_n(w, ",", 1);
			if (o->bytes <= (uint64_t)INT64_MAX)
				ppcc_jw_int(w, (int64_t)o->bytes);
			else
				ppcc_jw_real(w, (double)o->bytes, 17);
			if ((k - from) % 8 == 7)
				ppcc_jw_raw_n(w, "\n", 1);
		}
		ppcc_jw_raw(w, "]");
	}
	ppcc_jw_raw(w, "]}\n");
	ppcc_lanes_free(&l);
	return 0;
}

static int emit_html_body(ppcc_jw *w, const ppcc_plan *p, ppcc_diag *d)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = NULL;
	ppcc_estimate simulated;
	ppcc_arena *a = NULL;
	int err;

	if (s->n_ranks < 1 || !s->ranks) {
		ppcc_error(d, NULL, "the plan has no schedule to draw");
		err = PPCC_EINTERNAL;
		goto out;
	}
	if ((err = ppcc_emit_times(p, &e, &simulated, &a)) < 0)
		goto out;
	put_lines(w, html_head, sizeof html_head / sizeof *html_head);
	if ((err = put_header(w, p, s, e)) < 0 ||
	    (err = put_rows(w, p, s, e, d)) < 0 ||
	    (err = put_lanes(w, p, s, e, d)) < 0)
		goto out;
	ppcc_jw_raw(w, "</script>\n<script>\n");
	put_lines(w, html_script, sizeof html_script / sizeof *html_script);
	ppcc_jw_raw(w, "</script>\n</body>\n</html>\n");
	err = ppcc_jw_flush(w);
out:
	ppcc_arena_free(a);
	return err;
}

int ppcc_emit_html(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		   ppcc_diag *d)
{
	(void)o;
	return ppcc_emit_jw(f, p, d, emit_html_body, "the HTML timeline");
}
