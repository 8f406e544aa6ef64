/*
 * emit/header.c - the plan as a C header that a trainer compiles in.
 *
 * The header holds the schedule in the types of <ppcc/schedule.h> (or, when
 * standalone, in look-alike types of its own with the same layout) as
 * `static const` arrays, plus macros for the counts and the estimate, the
 * model's name and its layer names.  Every symbol starts with the
 * caller's prefix, so that two plans can live in one translation unit.
 * Contract: the file compiles cleanly as C11 and as C++ under -pedantic
 * whatever the names: user text appears only in pure-ASCII escaped
 * literals, identifiers from layer names are sanitized and made unique
 * deterministically, and the prefix may yield no reserved or clashing
 * name.  The fingerprint written is ppcc_schedule_fingerprint() of
 * exactly the tables written.
 *
 * Derivation: doc/design/header.md (each rule that keeps the header
 * compiling).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"

#define PREFIX_MAX 64
#define NAME_SEGMENT_MAX 40
#define LITERAL_MAX 4095 /* characters a C11 string literal may hold */
#define WRAP_COLUMN 72

/* Every keyword of C (to C23) and C++ (to C++23), with the alternative
 * operator spellings, which are keywords in C++. */
static const char *const keywords[] = {
	"_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex",
	"_Decimal128", "_Decimal32", "_Decimal64", "_Generic", "_Imaginary",
	"_Noreturn", "_Pragma", "_Static_assert", "_Thread_local", "alignas",
	"alignof", "and", "and_eq", "asm", "atomic_cancel", "atomic_commit",
	"atomic_noexcept", "auto", "bitand", "bitor", "bool", "break", "case",
	"catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await",
	"co_return", "co_yield", "compl", "concept", "const", "const_cast",
	"consteval", "constexpr", "constinit", "continue", "decltype",
	"default", "delete", "do", "double", "dynamic_cast", "else", "enum",
	"explicit", "export", "extern", "false", "final", "float", "for",
	"friend", "goto", "if", "import", "inline", "int", "long", "module",
	"mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
	"operator", "or", "or_eq", "override", "private", "protected",
	"public", "reflexpr", "register", "reinterpret_cast", "requires",
	"restrict", "return", "short", "signed", "sizeof", "static",
	"static_assert", "static_cast", "struct", "switch", "synchronized",
	"template", "this", "thread_local", "throw", "true", "try", "typedef",
	"typeid", "typename", "typeof", "typeof_unqual", "union", "unsigned",
	"using", "virtual", "void", "volatile", "wchar_t", "while", "xor",
	"xor_eq",
};

/* The names <ppcc/schedule.h> declares, which a generated name must not
 * repeat (the header includes it, or a trainer may include both), besides
 * PPCC_SCHED_<macro> of each kind in the table. */
static const char *const schedule_h_names[] = {
	"PPCC_SCHEDULE_H", "PPCC_SCHEDULE_VERSION", "PPCC_OP_COUNT",
	"PPCC_SCHED_COUNT", "PPCC_OP_F", "PPCC_OP_B", "PPCC_OP_I", "PPCC_OP_W",
	"PPCC_OP_SEND_F", "PPCC_OP_RECV_F", "PPCC_OP_SEND_B", "PPCC_OP_RECV_B",
	"PPCC_OP_OVERLAP_F_B", "PPCC_OP_REDUCE_GRAD", "PPCC_OP_REDUCE_SCATTER_GRAD",
	"PPCC_OP_ALL_GATHER_PARAM", "PPCC_OP_UNSHARD_PARAM", "ppcc_op", "ppcc_schedule_kind",
	"ppcc_action", "ppcc_rank_schedule",
	"ppcc_stage_info", "ppcc_schedule",
};

/* The fixed names the header defines after "prefix_" and "PREFIX_",
 * besides PREFIX_SCHED_<macro> of each kind. */
static const char *const lower_suffixes[] = {
	"ranks", "stages", "schedule", "model_name", "layer_names",
	"stage_layer_names", "busy_ms", "idle_ms", "peak_memory_bytes",
	"op", "schedule_kind", "action", "rank_schedule", "stage_info",
	"schedule_ir",
};
static const char *const upper_suffixes[] = {
	"H", "N_RANKS", "N_STAGES", "N_CHUNKS", "N_MICROBATCHES", "N_LAYERS",
	"KIND", "FINGERPRINT", "STEP_MS", "BUBBLE_FRACTION", "BUBBLE_ANALYTIC",
	"MAX_ACTIONS", "SCHEDULE_VERSION", "OP_COUNT", "SCHED_COUNT",
	"OP_F", "OP_B", "OP_I", "OP_W", "OP_SEND_F", "OP_RECV_F", "OP_SEND_B",
	"OP_RECV_B", "OP_OVERLAP_F_B",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct header_out {
	FILE *f;
	ppcc_arena *arena;
	int standalone;
	char lower[PREFIX_MAX + 1]; /* the prefix as given */
	char upper[PREFIX_MAX + 1]; /* upper case, for macros and enums */
	/* type and constant spellings: ppcc's, or the prefixed copies */
	char t_action[PREFIX_MAX + 32], t_rank[PREFIX_MAX + 32],
		t_stage[PREFIX_MAX + 32], t_sched[PREFIX_MAX + 32],
		c_ops[PREFIX_MAX + 32]; /* "PPCC_OP_" or "PREFIX_OP_" */
	char c_kinds[PREFIX_MAX + 32];
} header_out;

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int to_upper(int c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

static int is_keyword(const char *s)
{
	for (size_t i = 0; i < COUNT(keywords); i++)
		if (strcmp(s, keywords[i]) == 0)
			return 1;
	return 0;
}

/* ---- the prefix ------------------------------------------------------ */

int ppcc_emit_header_prefix_check(const char *prefix, ppcc_diag *d)
{
	size_t n = strlen(prefix);
	int ok = n >= 1 && n <= PREFIX_MAX && is_alpha((unsigned char)prefix[0]) &&
		 prefix[n - 1] != '_' && !strstr(prefix, "__");
	for (size_t i = 0; ok && i < n; i++) {
		int c = (unsigned char)prefix[i];
		ok = is_alpha(c) || is_digit(c) || c == '_';
	}
	if (!ok) {
		ppcc_error(d, NULL,
			   "invalid header prefix '%.*s': it must be a C identifier "
			   "of at most %d characters that starts with a letter, "
			   "does not end with '_' and holds no '__'",
			   PREFIX_MAX, prefix, PREFIX_MAX);
		return PPCC_EINPUT;
	}
	char upper[PREFIX_MAX + 1], name[2 * PREFIX_MAX + 32], theirs[64];
	for (size_t i = 0; i <= n; i++)
		upper[i] = (char)to_upper((unsigned char)prefix[i]);
	/* the kinds' names against each other and the fixed ones */
	for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
		snprintf(name, sizeof name, "%s_SCHED_%s", upper,
			 ppcc_sched_kind(k)->macro);
		const char *clash = NULL;
		for (size_t j = 0; !clash && j < COUNT(schedule_h_names); j++)
			if (strcmp(name, schedule_h_names[j]) == 0)
				clash = schedule_h_names[j];
		for (int j = 0; !clash && j < PPCC_SCHED_COUNT; j++) {
			snprintf(theirs, sizeof theirs, "PPCC_SCHED_%s",
				 ppcc_sched_kind(j)->macro);
			if (strcmp(name, theirs) == 0)
				clash = theirs;
		}
		for (size_t i = 0; !clash && i < COUNT(upper_suffixes); i++) {
			snprintf(name, sizeof name, "%s_%s", upper, upper_suffixes[i]);
			snprintf(theirs, sizeof theirs, "PPCC_SCHED_%s",
				 ppcc_sched_kind(k)->macro);
			if (strcmp(name, theirs) == 0)
				clash = theirs;
		}
		if (clash) {
			ppcc_error(d, NULL,
				   "header prefix '%s' would define '%s', which "
				   "<ppcc/schedule.h> declares",
				   prefix, clash);
			return PPCC_EINPUT;
		}
	}
	for (size_t k = 0; k < COUNT(schedule_h_names); k++) {
		const char *clash = NULL;
		for (size_t i = 0; !clash && i < COUNT(lower_suffixes); i++) {
			snprintf(name, sizeof name, "%s_%s", prefix, lower_suffixes[i]);
			if (strcmp(name, schedule_h_names[k]) == 0)
				clash = schedule_h_names[k];
		}
		for (size_t i = 0; !clash && i < COUNT(upper_suffixes); i++) {
			snprintf(name, sizeof name, "%s_%s", upper, upper_suffixes[i]);
			if (strcmp(name, schedule_h_names[k]) == 0)
				clash = schedule_h_names[k];
		}
		if (clash) {
			ppcc_error(d, NULL,
				   "header prefix '%s' would define '%s', which "
				   "<ppcc/schedule.h> declares",
				   prefix, clash);
			return PPCC_EINPUT;
		}
	}
	return 0;
}

/* ---- literals -------------------------------------------------------- */

/* One byte as it may stand inside a "..." or '...' literal. */
static void put_escaped(FILE *f, unsigned char c)
{
	switch (c) {
	case '"': fputs("\\\"", f); return;
	case '\'': fputs("\\'", f); return;
	case '\\': fputs("\\\\", f); return;
	case '?': fputs("\\?", f); return;
	}
	if (c >= 0x20 && c < 0x7f)
		fputc(c, f);
	else
		fprintf(f, "\\%03o", c);
}

static int escaped_width(unsigned char c)
{
	if (c == '"' || c == '\'' || c == '\\' || c == '?')
		return 2;
	return c >= 0x20 && c < 0x7f ? 1 : 4;
}

/* s as one or more adjacent string literals (C concatenates them), broken
 * between escapes near WRAP_COLUMN; continuation lines are indented with
 * `indent` tabs.  Only for len <= LITERAL_MAX. */
static void put_string_literal(FILE *f, const char *s, size_t len, int indent,
			       int column)
{
	fputc('"', f);
	column++;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (column + escaped_width(c) > WRAP_COLUMN && column > 8 * indent + 1) {
			fputs("\"\n", f);
			for (int t = 0; t < indent; t++)
				fputc('\t', f);
			fputc('"', f);
			column = 8 * indent + 1;
		}
		put_escaped(f, c);
		column += escaped_width(c);
	}
	fputc('"', f);
}

/* `static const char name[] = ...;` for a string of any length. */
static void put_char_array(FILE *f, const char *name, const char *s)
{
	size_t len = strlen(s);
	if (len <= LITERAL_MAX) {
		fprintf(f, "static const char %s[] =\n\t", name);
		put_string_literal(f, s, len, 1, 8);
		fputs(";\n", f);
		return;
	}
	fprintf(f, "static const char %s[%zu] = {", name, len + 1);
	int column = WRAP_COLUMN;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int w = escaped_width(c) + 4;
		if (column + w > WRAP_COLUMN) {
			fputs("\n\t", f);
			column = 8;
		}
		fputc('\'', f);
		put_escaped(f, c);
		fputs("', ", f);
		column += w;
	}
	fputs("\n\t0\n};\n", f);
}

/* A double as a C floating constant that reads back as the same value,
 * in the fewest of 15 to 17 digits (the caller checks isfinite). */
static void put_double(FILE *f, double x)
{
	char buf[64];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
}

static void put_u64(FILE *f, uint64_t x)
{
	if (x == 0)
		fputs("0", f);
	else
		fprintf(f, "UINT64_C(%" PRIu64 ")", x);
}

/* ---- layer identifiers ----------------------------------------------- */

typedef struct name_slot {
	const char *name;
	int next_suffix; /* the next _N to try when this name is taken again */
} name_slot;

typedef struct name_set {
	name_slot *slots;
	size_t mask;
} name_set;

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (size_t)h;
}

/* The slot holding s, or the empty slot where it would go. */
static name_slot *name_find(name_set *set, const char *s)
{
	size_t i = name_hash(s) & set->mask;
	while (set->slots[i].name && strcmp(set->slots[i].name, s) != 0)
		i = (i + 1) & set->mask;
	return &set->slots[i];
}

/* The identifier segment for a layer name, before de-duplication. */
static char *segment_base(ppcc_arena *a, const char *name)
{
	char buf[NAME_SEGMENT_MAX + 2];
	size_t n = 0;
	int pending_underscore = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (is_alpha(*p) || is_digit(*p)) {
			size_t need = pending_underscore && n > 0 ? 2 : 1;
			if (n + need > NAME_SEGMENT_MAX)
				break;
			if (pending_underscore && n > 0)
				buf[n++] = '_';
			buf[n++] = (char)*p;
			pending_underscore = 0;
		} else {
			pending_underscore = 1;
		}
	}
	buf[n] = 0;
	if (n == 0)
		return ppcc_arena_strdup(a, "layer");
	if (is_digit((unsigned char)buf[0]))
		return ppcc_arena_printf(a, "n%s", buf);
	if (is_keyword(buf))
		return ppcc_arena_printf(a, "%s_", buf);
	return ppcc_arena_strdup(a, buf);
}

/* out[i] is the identifier segment of layer i: unique, deterministic. */
static int layer_segments(char ***out, ppcc_arena *a, const ppcc_layer *layers,
			  int n)
{
	char **seg = ppcc_arena_alloc(a, (size_t)n, sizeof *seg);
	size_t cap = 16;
	while (cap < 2 * (size_t)n + 2)
		cap *= 2;
	name_set set = {ppcc_arena_alloc(a, cap, sizeof(name_slot)), cap - 1};
	if (!seg || !set.slots)
		return PPCC_ENOMEM;
	for (int i = 0; i < n; i++) {
		char *base = segment_base(a, layers[i].name ? layers[i].name : "");
		if (!base)
			return PPCC_ENOMEM;
		name_slot *slot = name_find(&set, base);
		char *pick = base;
		if (slot->name) {
			/* "int_" takes "int_2", not "int__2": never a double '_'. */
			const char *sep = base[strlen(base) - 1] == '_' ? "" : "_";
			name_slot *base_slot = slot;
			int k = base_slot->next_suffix;
			for (;; k++) {
				pick = ppcc_arena_printf(a, "%s%s%d", base, sep, k);
				if (!pick)
					return PPCC_ENOMEM;
				slot = name_find(&set, pick);
				if (!slot->name)
					break;
			}
			base_slot->next_suffix = k + 1;
		}
		slot->name = pick;
		slot->next_suffix = 2;
		seg[i] = pick;
	}
	*out = seg;
	return 0;
}

/* ---- the sections ---------------------------------------------------- */

static void put_preamble(header_out *h, const ppcc_plan *p)
{
	FILE *f = h->f;
	fprintf(f,
		"/*\n"
		" * Pipeline schedule compiled by ppcc " PPCC_VERSION_STRING
		" (`ppcc plan -f header`).\n"
		" * Generated: regenerate it rather than edit it.\n"
		" *\n"
		" * %s_stages[]          per virtual stage: rank, chunk, layers\n"
		" * %s_rank<N>_actions[] the ordered actions of rank N\n"
		" * %s_ranks[]           per rank: its action count and array\n"
		" * %s_schedule          all of the above, with its fingerprint\n"
		" * %s_model_name, %s_layer_names[]\n"
		" *\n"
		" * Names from the model file appear only in string literals.\n"
		" */\n",
		h->lower, h->lower, h->lower, h->lower, h->lower, h->lower);
	fprintf(f, "#ifndef %s_H\n#define %s_H\n\n", h->upper, h->upper);
	fputs("#include <stddef.h>\n#include <stdint.h>\n", f);
	if (!h->standalone) {
		fputs("#include <ppcc/schedule.h>\n\n", f);
		fprintf(f,
			"#if PPCC_SCHEDULE_VERSION < %d\n"
			"#error \"needs version %d or later of <ppcc/schedule.h>\"\n"
			"#endif\n",
			(int)p->best.schedule.version, (int)p->best.schedule.version);
	}
	fputc('\n', f);
}

/* The look-alike types of <ppcc/schedule.h>, field for field, for
 * trainers that do not use ppcc's headers. */
static void put_standalone_types(header_out *h, const ppcc_plan *p)
{
	FILE *f = h->f;
	const char *L = h->lower, *U = h->upper;
	fprintf(f, "#define %s_SCHEDULE_VERSION %d\n\n", U,
		(int)p->best.schedule.version);
	fprintf(f, "typedef enum %s_op {\n", L);
	for (int op = 0; op < PPCC_OP_COUNT; op++)
		fprintf(f, "\t%s_OP_%s = %d%s\n", U, ppcc_op_name(op), op,
			op + 1 < PPCC_OP_COUNT ? "," : "");
	fprintf(f, "} %s_op;\n\n#define %s_OP_COUNT %d\n\n", L, U, PPCC_OP_COUNT);
	fprintf(f, "typedef enum %s_schedule_kind {\n", L);
	for (int k = 0; k < PPCC_SCHED_COUNT; k++)
		fprintf(f, "\t%s_SCHED_%s = %d%s\n", U,
			ppcc_sched_kind(k)->macro, k,
			k + 1 < PPCC_SCHED_COUNT ? "," : "");
	fprintf(f, "} %s_schedule_kind;\n\n#define %s_SCHED_COUNT %d\n\n", L, U,
		PPCC_SCHED_COUNT);
	fprintf(f,
		"/* One action.  peer is -1 and bytes 0 for compute; peer is -1\n"
		" * for the collectives (REDUCE_GRAD, REDUCE_SCATTER_GRAD,\n"
		" * ALL_GATHER_PARAM, UNSHARD_PARAM), whose mb is the bucket. */\n"
		"typedef struct %s_action {\n"
		"\tint32_t op;    /* %s_op */\n"
		"\tint32_t stage; /* global virtual stage */\n"
		"\tint32_t mb;    /* microbatch */\n"
		"\tint32_t peer;  /* rank at the other end of a SEND or RECV */\n"
		"\tuint64_t bytes;\n"
		"} %s_action;\n\n",
		L, L, L);
	fprintf(f,
		"typedef struct %s_rank_schedule {\n"
		"\tint32_t rank;\n"
		"\tint32_t n_actions;\n"
		"\tconst %s_action *actions;\n"
		"} %s_rank_schedule;\n\n",
		L, L, L);
	fprintf(f,
		"/* Layers are 0-based and inclusive. */\n"
		"typedef struct %s_stage_info {\n"
		"\tint32_t stage;\n"
		"\tint32_t rank;\n"
		"\tint32_t chunk;\n"
		"\tint32_t first_layer;\n"
		"\tint32_t last_layer;\n"
		"\tuint64_t recv_bytes;\n"
		"\tuint64_t send_bytes;\n"
		"} %s_stage_info;\n\n",
		L, L);
	fprintf(f,
		"typedef struct %s_schedule_ir {\n"
		"\tint32_t version;\n"
		"\tint32_t kind;   /* %s_schedule_kind */\n"
		"\tint32_t n_ranks;\n"
		"\tint32_t n_chunks;\n"
		"\tint32_t n_stages;\n"
		"\tint32_t n_microbatches;\n"
		"\tconst %s_stage_info *stages;\n"
		"\tconst %s_rank_schedule *ranks;\n"
		"\tuint64_t fingerprint;\n"
		"} %s_schedule_ir;\n\n",
		L, L, L, L, L);
}

static void put_kind(header_out *h, int kind)
{
	if (!ppcc_sched_kind(kind)) {
		fprintf(h->f, "%d", kind);
		return;
	}
	fputs(h->c_kinds, h->f);
	fputs(ppcc_sched_kind(kind)->macro, h->f);
}

static void put_macros(header_out *h, const ppcc_plan *p,
		       const ppcc_schedule *s, uint64_t fingerprint)
{
	FILE *f = h->f;
	const char *U = h->upper;
	const ppcc_estimate *e = &p->best.estimate;
	int max_actions = 0;
	for (int r = 0; r < s->n_ranks; r++)
		if (s->ranks[r].n_actions > max_actions)
			max_actions = s->ranks[r].n_actions;
	fprintf(f, "#define %s_N_RANKS %d\n", U, (int)s->n_ranks);
	fprintf(f, "#define %s_N_CHUNKS %d\n", U, (int)s->n_chunks);
	fprintf(f, "#define %s_N_STAGES %d\n", U, (int)s->n_stages);
	fprintf(f, "#define %s_N_MICROBATCHES %d\n", U, (int)s->n_microbatches);
	fprintf(f, "#define %s_N_LAYERS %d\n", U, p->n_layers);
	fprintf(f, "#define %s_MAX_ACTIONS %d /* the longest rank */\n", U,
		max_actions);
	fprintf(f, "#define %s_KIND ", U);
	put_kind(h, s->kind);
	fprintf(f, "\n#define %s_FINGERPRINT UINT64_C(0x%016" PRIx64 ")\n", U,
		fingerprint);
	if (isfinite(e->step_ms) && e->step_ms > 0) {
		fprintf(f, "\n/* The simulated step (milliseconds) and idle share. */\n");
		fprintf(f, "#define %s_STEP_MS ", U);
		put_double(f, e->step_ms);
		if (isfinite(e->bubble_fraction)) {
			fprintf(f, "\n#define %s_BUBBLE_FRACTION ", U);
			put_double(f, e->bubble_fraction);
		}
		if (isfinite(e->bubble_analytic)) {
			fprintf(f, "\n#define %s_BUBBLE_ANALYTIC ", U);
			put_double(f, e->bubble_analytic);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* A per-rank array of the estimate, when every entry is finite. */
static void put_rank_doubles(header_out *h, const char *what, const double *v,
			     int n, const char *comment)
{
	if (!v)
		return;
	for (int r = 0; r < n; r++)
		if (!isfinite(v[r]))
			return;
	fprintf(h->f, "/* %s */\nstatic const double %s_%s[%s_N_RANKS] = {\n",
		comment, h->lower, what, h->upper);
	for (int r = 0; r < n; r++) {
		fputc('\t', h->f);
		put_double(h->f, v[r]);
		fputs(r + 1 < n ? ",\n" : "\n", h->f);
	}
	fputs("};\n\n", h->f);
}

static int put_names(header_out *h, const ppcc_plan *p,
		     const ppcc_stage_info *stages, int n_stages)
{
	FILE *f = h->f;
	char name[PREFIX_MAX + 48];
	int err;

	snprintf(name, sizeof name, "%s_model_name", h->lower);
	put_char_array(f, name, p->model_name ? p->model_name : "");
	fputc('\n', f);
	if (!p->layers || p->n_layers <= 0)
		return 0;

	for (int i = 0; i < p->n_layers; i++) {
		const char *ln = p->layers[i].name ? p->layers[i].name : "";
		if (strlen(ln) > LITERAL_MAX) {
			snprintf(name, sizeof name, "%s_long_name%d", h->lower, i);
			put_char_array(f, name, ln);
			fputc('\n', f);
		}
	}
	fprintf(f, "static const char *const %s_layer_names[%s_N_LAYERS] = {\n",
		h->lower, h->upper);
	for (int i = 0; i < p->n_layers; i++) {
		const char *ln = p->layers[i].name ? p->layers[i].name : "";
		size_t len = strlen(ln);
		fputc('\t', f);
		if (len > LITERAL_MAX)
			fprintf(f, "%s_long_name%d", h->lower, i);
		else
			put_string_literal(f, ln, len, 1, 8);
		fputs(i + 1 < p->n_layers ? ",\n" : "\n", f);
	}
	fputs("};\n\n", f);

	int ranges_ok = 1;
	for (int s = 0; s < n_stages; s++)
		ranges_ok &= stages[s].first_layer >= 0 &&
			     stages[s].first_layer < p->n_layers;
	if (ranges_ok) {
		fprintf(f,
			"/* Stage s holds the layers\n"
			" * %s_stage_layer_names[s][0 .. last_layer - first_layer]. */\n"
			"static const char *const *const "
			"%s_stage_layer_names[%s_N_STAGES] = {\n",
			h->lower, h->lower, h->upper);
		for (int s = 0; s < n_stages; s++)
			fprintf(f, "\t%s_layer_names + %d%s\n", h->lower,
				(int)stages[s].first_layer, s + 1 < n_stages ? "," : "");
		fputs("};\n\n", f);
	}

	char **seg;
	if ((err = layer_segments(&seg, h->arena, p->layers, p->n_layers)) < 0)
		return err;
	fputs("/* Layer indices, named after the layers (sanitized). */\n"
	      "enum {\n", f);
	for (int i = 0; i < p->n_layers; i++)
		fprintf(f, "\t%s_LAYER_%s = %d%s\n", h->upper, seg[i], i,
			i + 1 < p->n_layers ? "," : "");
	fputs("};\n\n", f);
	return 0;
}

static void put_actions(header_out *h, const ppcc_schedule *s)
{
	FILE *f = h->f;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->n_actions == 0)
			continue;
		fprintf(f,
			"/* rank %d: %d actions {op, stage, mb, peer, bytes} */\n"
			"static const %s %s_rank%d_actions[%d] = {\n",
			r, (int)rs->n_actions, h->t_action, h->lower, r,
			(int)rs->n_actions);
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			fprintf(f, "\t{%s%s, %d, %d, %d, ", h->c_ops,
				ppcc_op_name(a->op), (int)a->stage, (int)a->mb,
				(int)a->peer);
			put_u64(f, a->bytes);
			fputs(i + 1 < rs->n_actions ? "},\n" : "}\n", f);
		}
		fputs("};\n\n", f);
	}
	fprintf(f, "static const %s %s_ranks[%s_N_RANKS] = {\n", h->t_rank,
		h->lower, h->upper);
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		fprintf(f, "\t{%d, %d, ", (int)rs->rank, (int)rs->n_actions);
		if (rs->n_actions)
			fprintf(f, "%s_rank%d_actions}", h->lower, r);
		else
			fputs("NULL}", f);
		fputs(r + 1 < s->n_ranks ? ",\n" : "\n", f);
	}
	fputs("};\n\n", f);
}

static void put_stages(header_out *h, const ppcc_stage_info *st, int n)
{
	FILE *f = h->f;
	fprintf(f,
		"/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, "
		"send_bytes} */\n"
		"static const %s %s_stages[%s_N_STAGES] = {\n",
		h->t_stage, h->lower, h->upper);
	for (int i = 0; i < n; i++) {
		fprintf(f, "\t{%d, %d, %d, %d, %d, ", (int)st[i].stage,
			(int)st[i].rank, (int)st[i].chunk, (int)st[i].first_layer,
			(int)st[i].last_layer);
		put_u64(f, st[i].recv_bytes);
		fputs(", ", f);
		put_u64(f, st[i].send_bytes);
		fputs(i + 1 < n ? "},\n" : "}\n", f);
	}
	fputs("};\n\n", f);
}

static void put_schedule(header_out *h, const ppcc_schedule *s)
{
	FILE *f = h->f;
	fprintf(f, "static const %s %s_schedule = {\n", h->t_sched, h->lower);
	fprintf(f, "\t%d, /* version */\n\t", (int)s->version);
	put_kind(h, s->kind);
	fprintf(f,
		",\n\t%s_N_RANKS,\n\t%s_N_CHUNKS,\n\t%s_N_STAGES,\n"
		"\t%s_N_MICROBATCHES,\n\t%s_stages,\n\t%s_ranks,\n"
		"\t%s_FINGERPRINT\n};\n\n",
		h->upper, h->upper, h->upper, h->upper, h->lower, h->lower,
		h->upper);
}

/* The emitter trusts the plan's shape only as far as it checks it here. */
static int check_schedule(const ppcc_schedule *s, const ppcc_stage_info *st,
			  ppcc_diag *d)
{
	if (s->n_ranks < 1 || s->n_stages < 1 || !s->ranks || !st) {
		ppcc_error(d, NULL, "the plan has no schedule to write");
		return PPCC_EINTERNAL;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->n_actions < 0 || (rs->n_actions > 0 && !rs->actions)) {
			ppcc_error(d, NULL, "rank %d has no action list", r);
			return PPCC_EINTERNAL;
		}
		for (int i = 0; i < rs->n_actions; i++)
			if (rs->actions[i].op < 0 || rs->actions[i].op >= PPCC_OP_COUNT) {
				ppcc_error(d, NULL, "rank %d action %d has unknown op %d",
					   r, i, (int)rs->actions[i].op);
				return PPCC_EINTERNAL;
			}
	}
	return 0;
}

static int emit_header_body(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		     ppcc_diag *d)
{
	ppcc_diag quiet = {0};
	header_out h = {.f = f, .standalone = o && o->standalone};
	const char *prefix = o && o->prefix ? o->prefix : "ppcc_plan";
	const ppcc_schedule *s = &p->best.schedule;
	int err;

	if (!d)
		d = &quiet;
	if ((err = ppcc_emit_header_prefix_check(prefix, d)) < 0)
		return err;
	/* The schedule's own stage table is what the fingerprint covers. */
	const ppcc_stage_info *stages = s->stages ? s->stages : p->best.stages;
	if ((err = check_schedule(s, stages, d)) < 0)
		return err;

	ppcc_schedule fp_view = *s;
	fp_view.stages = stages;
	uint64_t fingerprint = ppcc_schedule_fingerprint(&fp_view);

	size_t n = strlen(prefix);
	memcpy(h.lower, prefix, n + 1);
	for (size_t i = 0; i <= n; i++)
		h.upper[i] = (char)to_upper((unsigned char)prefix[i]);
	if (h.standalone) {
		snprintf(h.t_action, sizeof h.t_action, "%s_action", h.lower);
		snprintf(h.t_rank, sizeof h.t_rank, "%s_rank_schedule", h.lower);
		snprintf(h.t_stage, sizeof h.t_stage, "%s_stage_info", h.lower);
		snprintf(h.t_sched, sizeof h.t_sched, "%s_schedule_ir", h.lower);
		snprintf(h.c_ops, sizeof h.c_ops, "%s_OP_", h.upper);
		snprintf(h.c_kinds, sizeof h.c_kinds, "%s_SCHED_", h.upper);
	} else {
		strcpy(h.t_action, "ppcc_action");
		strcpy(h.t_rank, "ppcc_rank_schedule");
		strcpy(h.t_stage, "ppcc_stage_info");
		strcpy(h.t_sched, "ppcc_schedule");
		strcpy(h.c_ops, "PPCC_OP_");
		strcpy(h.c_kinds, "PPCC_SCHED_");
	}
	if (!(h.arena = ppcc_arena_new())) {
		err = PPCC_ENOMEM;
		goto out;
	}

	put_preamble(&h, p);
	if (h.standalone)
		put_standalone_types(&h, p);
	put_macros(&h, p, s, fingerprint);
	if ((err = put_names(&h, p, stages, s->n_stages)) < 0)
		goto out;
	put_stages(&h, stages, s->n_stages);
	put_actions(&h, s);
	put_schedule(&h, s);
	const ppcc_estimate *e = &p->best.estimate;
	put_rank_doubles(&h, "busy_ms", e->busy_ms, s->n_ranks,
			 "simulated busy time per rank (milliseconds)");
	put_rank_doubles(&h, "idle_ms", e->idle_ms, s->n_ranks,
			 "simulated idle time per rank (milliseconds)");
	put_rank_doubles(&h, "peak_memory_bytes", e->peak_memory_bytes,
			 s->n_ranks, "simulated peak memory per device of each rank");
	fprintf(f, "#endif /* %s_H */\n", h.upper);
out:
	ppcc_arena_free(h.arena);
	if (err == PPCC_ENOMEM)
		ppcc_error(d, NULL, "out of memory writing the C header");
	if (!err && ferror(f)) {
		ppcc_error(d, NULL, "cannot write the C header");
		err = PPCC_EIO;
	}
	return err;
}

int ppcc_emit_header(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	locale_t saved = ppcc_locale_enter();
	int err = emit_header_body(f, p, o, d);
	ppcc_locale_leave(saved);
	return err;
}
