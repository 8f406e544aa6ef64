/*
 * split.c - the split that minimises the simulated step, not a proxy.
 *
 * What users pay for is the step (iteration) time of the schedule they
 * run, which ppcc_simulate computes; what partition.c minimises exactly is
 * a proxy, the largest per-microbatch stage time.  This file searches the
 * splits with the simulator as the objective and every rank's simulated
 * peak memory as the constraint.
 *
 * Contract: splits are compared by fitting (the largest overflow when none
 * fits), then the simulated step in whole nanoseconds, the least peak of
 * the busiest rank, the most balanced ranks and the latest starts, a total
 * order, so the answer is unique.  When the splits are within the budget
 * of simulations every one is simulated and the answer is exact;
 * otherwise each seed the caller gives is improved by descent, and the
 * result is never worse than any seed (the uniform split in particular).
 * The gap printed is to lower_bound_ms, which holds for every split.
 * A remembered split and the second thread (sp->threads > 1) change
 * nothing the search computes, counts or keeps.
 * Limits: a descent is not exact; the budget (ppcc_step_problem.max_sims,
 * PPCC_STEP_MODEL_WORK) bounds the simulations and the models.
 *
 * Derivation: doc/design/split.md (the order, the lower bounds, the
 * memory model, the search and its cost, reuse, the second thread).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "ppcc.h"

/* What the memory model and the bound say of a split, without simulating
 * it: the largest overflow of a rank's modelled peak (<= 0: it fits), the
 * sum of the positive ones, the bound, the largest load of a rank (the sum of
 * its actions' durations), and the sum of the squares of the
 * ranks' loads (smaller: more balanced). */
typedef struct model_key {
	double over, excess, bound, load, square;
} model_key;

/* A move of one layer between stages that are not neighbours, as the
 * model rates it. */
typedef struct step_move {
	model_key k;
	int a, b;
} step_move;

/* A simulation run ahead on a second thread (sp->threads > 1): the
 * split the search expects to simulate next, its costs, and the
 * simulation's own arena and buffers; step_sim takes its estimate when
 * the search comes to that split with the same costs, bit for bit. */
typedef struct step_ahead {
	pthread_t thread;
	int running;                /* started and not joined */
	int S;                      /* entries first, next and costs hold */
	int *first;
	int *next;                  /* a split the search is looking at */
	ppcc_stage_cost *costs;
	const ppcc_schedule *shape;
	ppcc_arena *arena;
	ppcc_sim_work *sim;
	ppcc_estimate est;
	int err;
} step_ahead;

struct ppcc_step_ctx {
	int n, S, p;                /* capacity the buffers were sized for */
	step_ahead *ahead;          /* NULL until a search runs one */
	ppcc_arena *arena;          /* one simulation's arrays, reset after */
	ppcc_sim_work *sim;         /* the simulator's buffers, kept */
	ppcc_stage_cost *costs;     /* S: the split the bound looks at */
	ppcc_stage_cost *sim_costs; /* S: the split simulated */
	int *cur, *cand, *best, *trial, *seed; /* S + 1 each */
	int *sim_first;             /* S + 1: the split in sim_costs */
	double *rank_sum;           /* p: a rank's actions' durations */
	double *stage_total;        /* S: a stage's actions' durations */
	int32_t *op_count;          /* S * PPCC_OP_COUNT: actions per op */
	/* the placement, from the schedule's stage table: stage_rank and
	 * stage_chunk S each, rank_stage p v (rank r's chunk c holds stage
	 * rank_stage[r v + c]) */
	int *stage_rank, *stage_chunk, *rank_stage;
	/* the memory model: rank r's in-flight count vectors (v counts, one
	 * per chunk) are mm_vec[v * mm_off[r] .. v * mm_off[r + 1]) */
	int *mm_vec, *mm_off, *mm_cnt, *mrank; /* mrank: p */
	long mm_cap;                /* ints mm_vec holds */
	int *mm_sum;                /* each kept vector's total */
	long mm_sum_cap;            /* entries mm_sum holds */
	/* the count vectors one rank has reached so far: ms_n of them in
	 * ms_vec (ms_cap ints), found through ms_slot (ms_slots, a power of
	 * two; -1 empty) */
	int *ms_vec, *ms_slot;
	uint64_t *ms_hash;          /* ms_n: each reached vector's hash */
	uint64_t *vec_key;          /* S: chunk c's term of a vector's hash */
	long ms_cap, ms_n, ms_slots;
	ppcc_stage_cost *mcost;     /* S: the split the model looks at */
	double *mtotal, *msum, *mpeak; /* S, p, p: loads, overflows */
	double *held;               /* S: one rank's chunks' step_held */
	int *mcur, *mcand, *mbest;  /* S + 1 each */
	int *mseed;                 /* PPCC_STEP_MAX_SEEDS + 1 splits of S + 1 */
	step_move *moves;           /* PPCC_STEP_MOVES */
	/* the stages of one split and of the moves from it (step_variants):
	 * STEP_VARIANTS costs a stage; vp, mp: S pointers to stage costs */
	ppcc_stage_cost *vcost;
	const ppcc_stage_cost **vp, **mp;
	double *vown;               /* per variant: its own actions' durations */
	double *vtot, *vsum;        /* S, p: the split's stage totals, loads */
	double *vover;              /* p: its ranks' overflows by the model */
	unsigned char *vtouch;      /* p: the ranks a move changes (0 after) */
	/* the splits this search has simulated and their keys (step_memo):
	 * memo_n of them, memo_S ints each in memo_split, found through
	 * memo_slot (memo_slots, a power of two), a slot holding an entry
	 * of this search when memo_gen[slot] is memo_now */
	int *memo_split;
	struct step_key *memo_key;
	int32_t *memo_slot;
	uint32_t *memo_gen, memo_now;
	long memo_n, memo_cap, memo_slots;
	int memo_S;
};

/* The most promising moves step_transfers keeps to simulate. */
#define PPCC_STEP_MOVES 64

/* A stage's layers i..j as they are, and as a move of one layer can leave
 * them (step_variants). */
enum { V_SAME, V_LEFT, V_RIGHT, V_NO_LAST, V_NO_FIRST, V_ONE_BEFORE,
       V_ONE_AFTER, STEP_VARIANTS };

typedef struct step_key {
	int fits;
	int64_t over;    /* bytes over the worst rank's cap (when not fits) */
	int64_t step_ns;
	int64_t peak;    /* bytes, the largest per-rank peak */
	int64_t spread_ns;
	double step_ms;  /* unquantised, for reporting */
	double peak_bytes;
} step_key;

typedef struct step_run {
	ppcc_step_ctx *x;
	const ppcc_step_problem *sp;
	const ppcc_schedule *shape;
	int n, S, p, m, v;
	long sims, budget;
	long evals, eval_budget; /* of the memory model (no simulation) */
	long repairs;            /* models spent repairing, as many again */
	long remembered;         /* simulations answered by step_memo */
	int sim_have;            /* x->sim_costs holds x->sim_first's costs */
	int path_bound; /* the path bound's preconditions hold */
	/* sp->best: the least split simulated so far (least_first, in
	 * sp->kept_arena) and its key; its estimate is in sp->best */
	int least_have;
	int *least_first;
	step_key least;
	int ahead_on;   /* simulations may run ahead (step_ahead_start) */
} step_run;

static void step_ahead_free(step_ahead *h)
{
	if (!h)
		return;
	if (h->running)
		pthread_join(h->thread, NULL);
	ppcc_arena_free(h->arena);
	ppcc_sim_work_free(h->sim);
	ppcc_free(h->first);
	ppcc_free(h->next);
	ppcc_free(h->costs);
	ppcc_free(h);
}

void ppcc_step_ctx_free(ppcc_step_ctx *x)
{
	if (!x)
		return;
	step_ahead_free(x->ahead);
	ppcc_arena_free(x->arena);
	ppcc_sim_work_free(x->sim);
	ppcc_free(x->costs);
	ppcc_free(x->sim_costs);
	ppcc_free(x->cur);
	ppcc_free(x->rank_sum);
	ppcc_free(x->stage_total);
	ppcc_free(x->op_count);
	ppcc_free(x->stage_rank);
	ppcc_free(x->mm_vec);
	ppcc_free(x->mm_sum);
	ppcc_free(x->mm_off);
	ppcc_free(x->ms_vec);
	ppcc_free(x->ms_slot);
	ppcc_free(x->ms_hash);
	ppcc_free(x->vec_key);
	ppcc_free(x->mcost);
	ppcc_free(x->mtotal);
	ppcc_free(x->mcur);
	ppcc_free(x->mseed);
	ppcc_free(x->moves);
	ppcc_free(x->vcost);
	ppcc_free(x->vp);
	ppcc_free(x->vown);
	ppcc_free(x->vtouch);
	ppcc_free(x->memo_split);
	ppcc_free(x->memo_key);
	ppcc_free(x->memo_slot);
	ppcc_free(x->memo_gen);
	ppcc_free(x);
}

/* Chunk c's term of a count vector's hash: splitmix64's output for c,
 * odd (so that every count of it hashes apart modulo 2^64). */
static uint64_t step_vec_key(int c)
{
	uint64_t z = ((uint64_t)c + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31)) | 1;
}

/* Sizes the context for n layers, S stages and p ranks (grows only). */
static int step_ctx_reserve(ppcc_step_ctx **px, int n, int S, int p)
{
	ppcc_step_ctx *x = *px;
	if (x && x->n >= n && x->S >= S && x->p >= p)
		return 0;
	if (x) {
		n = n > x->n ? n : x->n;
		S = S > x->S ? S : x->S;
		p = p > x->p ? p : x->p;
	}
	ppcc_step_ctx *y = ppcc_calloc(1, sizeof *y);
	if (!y)
		return PPCC_ENOMEM;
	y->n = n;
	y->S = S;
	y->p = p;
	y->arena = ppcc_arena_new();
	y->costs = ppcc_calloc((size_t)S, sizeof *y->costs);
	y->sim_costs = ppcc_calloc((size_t)S, sizeof *y->sim_costs);
	y->cur = ppcc_calloc(6 * ((size_t)S + 1), sizeof(int));
	y->rank_sum = ppcc_calloc((size_t)p, sizeof(double));
	y->stage_total = ppcc_calloc((size_t)S, sizeof(double));
	y->op_count = ppcc_calloc((size_t)S * PPCC_OP_COUNT, sizeof(int32_t));
	y->stage_rank = ppcc_calloc(3 * (size_t)S, sizeof(int));
	if (y->stage_rank) {
		y->stage_chunk = y->stage_rank + S;
		y->rank_stage = y->stage_rank + 2 * (size_t)S;
	}
	y->mm_off = ppcc_calloc(2 * (size_t)p + 1 + (size_t)S, sizeof(int));
	y->mcost = ppcc_calloc((size_t)S, sizeof *y->mcost);
	y->mtotal = ppcc_calloc(2 * (size_t)S + 2 * (size_t)p, sizeof(double));
	y->mcur = ppcc_calloc(3 * ((size_t)S + 1), sizeof(int));
	y->mseed = ppcc_calloc((PPCC_STEP_MAX_SEEDS + 1) * ((size_t)S + 1), sizeof(int));
	y->moves = ppcc_calloc(PPCC_STEP_MOVES, sizeof *y->moves);
	y->vcost = ppcc_calloc(STEP_VARIANTS * (size_t)S, sizeof *y->vcost);
	y->vp = ppcc_calloc(2 * (size_t)S, sizeof *y->vp);
	y->vown = ppcc_calloc((STEP_VARIANTS + 1) * (size_t)S + 2 * (size_t)p, sizeof(double));
	y->vtouch = ppcc_calloc((size_t)p, 1);
	y->vec_key = ppcc_calloc((size_t)S, sizeof *y->vec_key);
	if (y->vec_key)
		for (int c = 0; c < S; c++)
			y->vec_key[c] = step_vec_key(c);
	if (!y->vec_key || !y->arena || !y->costs || !y->sim_costs || !y->cur || !y->rank_sum || !y->stage_total ||
	    !y->op_count || !y->stage_rank || !y->mm_off || !y->mcost || !y->mtotal ||
	    !y->mcur || !y->mseed || !y->moves || !y->vcost || !y->vp || !y->vown ||
	    !y->vtouch) {
		ppcc_step_ctx_free(y);
		return PPCC_ENOMEM;
	}
	y->cand = y->cur + (S + 1);
	y->best = y->cand + (S + 1);
	y->trial = y->best + (S + 1);
	y->seed = y->trial + (S + 1);
	y->sim_first = y->seed + (S + 1);
	y->mm_cnt = y->mm_off + (p + 1);
	y->mrank = y->mm_cnt + S;
	y->msum = y->mtotal + S;
	y->mpeak = y->msum + p;
	y->held = y->mpeak + p;
	y->mcand = y->mcur + (S + 1);
	y->mbest = y->mcand + (S + 1);
	y->mp = y->vp + S;
	y->vtot = y->vown + STEP_VARIANTS * (size_t)S;
	y->vsum = y->vtot + S;
	y->vover = y->vsum + p;
	ppcc_step_ctx_free(x);
	*px = y;
	return 0;
}

int ppcc_step_ctx_new(ppcc_step_ctx **out, int n, int S, int p)
{
	*out = NULL;
	if (n < 1 || S < 1 || p < 1)
		return PPCC_EINPUT;
	return step_ctx_reserve(out, n, S, p);
}

static double step_op_ms(const ppcc_stage_cost *c, int op, int stage)
{
	/* a receive lasts its sender's transfer; stage 0's RECV_F has none */
	if (op == PPCC_OP_RECV_F || op == PPCC_OP_RECV_B) {
		stage += op == PPCC_OP_RECV_F ? -1 : 1;
		if (stage < 0)
			return 0;
	}
	return ppcc_op_least_ms(&c[stage], op);
}

/* 1 when count vector a is at most b in every chunk. */
static int step_dominated(const int *a, const int *b, int v)
{
	for (int c = 0; c < v; c++)
		if (a[c] > b[c])
			return 0;
	return 1;
}

/* A count vector's hash is sum_c c[c] * vec_key[c] modulo 2^64: one
 * action changes one count by one, so the walk of a rank's order keeps
 * it up to date with one addition (step_mem_ranks) instead of hashing
 * v counts at every F.  Its slot in a table of mask + 1 comes from its
 * mixed bits, a sum's low bits being poor. */
static uint64_t step_vec_slot(uint64_t h, uint64_t mask)
{
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h & mask;
}

/* Adds count vector c, whose hash is h, to the set of
 * those the rank has reached: 1 when it was there already, 0 when added,
 * PPCC_ENOMEM. */
static int step_vec_seen(ppcc_step_ctx *x, const int *c, int v, uint64_t h)
{
	if (2 * (x->ms_n + 1) > x->ms_slots) {
		long slots = x->ms_slots ? 2 * x->ms_slots : 256;
		int *t = ppcc_malloc((size_t)slots * sizeof *t);
		if (!t)
			return PPCC_ENOMEM;
		for (long i = 0; i < slots; i++)
			t[i] = -1;
		for (long k = 0; k < x->ms_n; k++) {
			uint64_t j = step_vec_slot(x->ms_hash[k], (uint64_t)(slots - 1));
			while (t[j] >= 0)
				j = (j + 1) & (uint64_t)(slots - 1);
			t[j] = (int)k;
		}
		ppcc_free(x->ms_slot);
		x->ms_slot = t;
		x->ms_slots = slots;
	}
	uint64_t mask = (uint64_t)(x->ms_slots - 1);
	uint64_t j = step_vec_slot(h, mask);
	for (; x->ms_slot[j] >= 0; j = (j + 1) & mask)
		if (x->ms_hash[x->ms_slot[j]] == h &&
		    memcmp(&x->ms_vec[(long)x->ms_slot[j] * v], c, (size_t)v * sizeof *c) == 0)
			return 1;
	if ((x->ms_n + 1) * v > x->ms_cap) {
		long cap = x->ms_cap ? 2 * x->ms_cap : 256L * v;
		/* a hash for each vector the ints will hold */
		uint64_t *hs = ppcc_realloc(x->ms_hash, (size_t)(cap / v + 1) * sizeof *hs);
		if (!hs)
			return PPCC_ENOMEM;
		x->ms_hash = hs;
		int *grown = ppcc_realloc(x->ms_vec, (size_t)cap * sizeof *grown);
		if (!grown)
			return PPCC_ENOMEM;
		x->ms_vec = grown;
		x->ms_cap = cap;
	}
	memcpy(&x->ms_vec[x->ms_n * v], c, (size_t)v * sizeof *c);
	x->ms_hash[x->ms_n] = h;
	x->ms_slot[j] = (int)x->ms_n++;
	return 0;
}

/* Forgets the vectors of the rank before. */
static void step_vec_seen_clear(ppcc_step_ctx *x)
{
	x->ms_n = 0;
	for (long i = 0; i < x->ms_slots; i++)
		x->ms_slot[i] = -1;
}

/* The memory model's count vectors: walking each rank's order, the
 * microbatches of each of its chunks in flight just after every F (where
 * alone the stash grows), keeping only the vectors no other one is at
 * least as large as in every chunk.  A vector the rank reached before is
 * passed over at once: when it was reached it was kept or covered, and a
 * kept vector leaves the set only for one that covers it, so the set
 * still covers it.  A vector covers another only with a larger total
 * (equal totals: equal vectors, reached before), so a new vector is
 * compared only with kept ones of larger total (whether it is covered)
 * and smaller (which it covers), and not at all when its total is at
 * least the largest kept (at most the smallest): in a steady state the
 * total in flight stays the same.  O(A v) for A actions, and O(K v) for
 * each vector new to the rank whose total is within those kept (K
 * vectors kept).  This walks the ranks [begin, end), their vectors kept
 * in x from x->mm_off[begin] = 0 on (x is the search's context, or, for the
 * second half of the ranks, step_shape's own; the placement, hash keys
 * and op counts are the search's either way). */
static int step_mem_ranks(ppcc_step_ctx *x, const step_run *w, int begin,
			  int end)
{
	const ppcc_schedule *s = w->shape;
	int v = w->v;
	int kept = 0, *cnt = x->mm_cnt;
	for (int r = begin; r < end; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int from = kept, total = 0, lo = 0, hi = 0;
		uint64_t h = 0; /* cnt's hash */
		x->mm_off[r] = kept;
		for (int c = 0; c < v; c++)
			cnt[c] = 0;
		step_vec_seen_clear(x);
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			int c = x->stage_chunk[a->stage];
			if (a->op == PPCC_OP_B || a->op == PPCC_OP_W) {
				cnt[c]--;
				total--;
				h -= x->vec_key[c];
				continue;
			}
			if (a->op != PPCC_OP_F)
				continue;
			cnt[c]++;
			total++;
			h += x->vec_key[c];
			int seen = step_vec_seen(x, cnt, v, h);
			if (seen < 0)
				return seen;
			if (seen)
				continue;
			int dom = 0;
			if (kept > from && total < hi)
				for (int k = from; k < kept && !dom; k++)
					dom = x->mm_sum[k] > total &&
					      step_dominated(cnt, &x->mm_vec[(long)k * v], v);
			if (dom)
				continue;
			/* drop the kept vectors this one covers, then keep it */
			if (kept > from && total > lo) {
				int out = from;
				lo = hi = total;
				for (int k = from; k < kept; k++) {
					if (x->mm_sum[k] < total &&
					    step_dominated(&x->mm_vec[(long)k * v], cnt, v))
						continue;
					if (out != k) {
						memmove(&x->mm_vec[(long)out * v],
							&x->mm_vec[(long)k * v],
							(size_t)v * sizeof(int));
						x->mm_sum[out] = x->mm_sum[k];
					}
					lo = x->mm_sum[out] < lo ? x->mm_sum[out] : lo;
					hi = x->mm_sum[out] > hi ? x->mm_sum[out] : hi;
					out++;
				}
				kept = out;
			} else {
				lo = kept > from && lo < total ? lo : total;
				hi = kept > from && hi > total ? hi : total;
			}
			if ((long)(kept + 1) * v > x->mm_cap) {
				/* few vectors are kept: grow by doubling */
				long cap = x->mm_cap > 0 ? 2 * x->mm_cap : 64L * v;
				int *grown = ppcc_realloc(x->mm_vec, (size_t)cap * sizeof(int));
				if (!grown)
					return PPCC_ENOMEM;
				x->mm_vec = grown;
				x->mm_cap = cap;
			}
			if (kept + 1 > x->mm_sum_cap) {
				long cap = x->mm_sum_cap > 0 ? 2 * x->mm_sum_cap : 64;
				int *grown = ppcc_realloc(x->mm_sum, (size_t)cap * sizeof(int));
				if (!grown)
					return PPCC_ENOMEM;
				x->mm_sum = grown;
				x->mm_sum_cap = cap;
			}
			x->mm_sum[kept] = total;
			memcpy(&x->mm_vec[(long)kept++ * v], cnt, (size_t)v * sizeof(int));
		}
	}
	x->mm_off[end] = kept;
	return 0;
}

/* Counts the actions of the ranks [lo, hi) per (stage, op) into the
 * search's x->op_count (a stage is one rank's: the halves write apart),
 * then walks their count vectors into x (step_mem_ranks). */
static int step_shape_ranks(ppcc_step_ctx *x, const step_run *w, int lo, int hi)
{
	const ppcc_schedule *s = w->shape;
	for (int r = lo; r < hi; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (a->stage < 0 || a->stage >= w->S || a->op < 0 ||
			    a->op >= PPCC_OP_COUNT || x->stage_rank[a->stage] != r ||
			    (a->op == PPCC_OP_RECV_F && a->stage == 0) ||
			    (a->op == PPCC_OP_RECV_B && a->stage == w->S - 1))
				return PPCC_EINPUT;
			x->op_count[a->stage * PPCC_OP_COUNT + a->op]++;
		}
	}
	return step_mem_ranks(x, w, lo, hi);
}

/* The second half of the ranks, on a second thread: its own context for
 * the count vectors, sharing the search's placement, keys and counts. */
typedef struct step_shape_half {
	ppcc_step_ctx y;
	const step_run *w;
	int lo, hi, err;
} step_shape_half;

static void *step_shape_half_run(void *arg)
{
	step_shape_half *h = arg;
	h->err = step_shape_ranks(&h->y, h->w, h->lo, h->hi);
	return NULL;
}

/* With both halves walked (join): appends the second half's vectors
 * (h->y) to the search's, its ranks' offsets moved past the first
 * half's (the vectors' totals, mm_sum, are the walk's alone and are not
 * kept).  Frees h->y's buffers either way. */
static int step_shape_join(ppcc_step_ctx *x, step_shape_half *h, int v,
			   int join)
{
	ppcc_step_ctx *y = &h->y;
	int err = 0;
	if (join) {
		int first = x->mm_off[h->lo], second = y->mm_off[h->hi];
		long all = (long)first + second;
		if (all * v > x->mm_cap) {
			int *grown = ppcc_realloc(x->mm_vec,
						  (size_t)(all * v) * sizeof(int));
			if (grown) {
				x->mm_vec = grown;
				x->mm_cap = all * v;
			}
		}
		if (all * v > x->mm_cap) {
			err = PPCC_ENOMEM;
		} else {
			if (second > 0)
				memcpy(&x->mm_vec[(long)first * v], y->mm_vec,
				       (size_t)second * (size_t)v * sizeof(int));
			for (int r = h->lo; r <= h->hi; r++)
				x->mm_off[r] = first + y->mm_off[r];
		}
	}
	ppcc_free(y->mm_vec);
	ppcc_free(y->mm_sum);
	ppcc_free(y->ms_vec);
	ppcc_free(y->ms_slot);
	ppcc_free(y->ms_hash);
	ppcc_free(y->mm_off);
	return err;
}

/* Counts each rank's actions per (stage, op) and checks the path bound's
 * preconditions on the schedule; the memory model's count vectors.  When
 * the search may run simulations ahead (a large schedule, a second
 * thread), the second half of the ranks (by actions) is walked on the
 * second thread; the counts and vectors are the same. */
static int step_shape(step_run *w)
{
	const ppcc_schedule *s = w->shape;
	ppcc_step_ctx *x = w->x;
	memset(x->op_count, 0, (size_t)w->S * PPCC_OP_COUNT * sizeof(int32_t));
	for (int st = 0; st < w->S; st++) {
		int r = s->stages ? s->stages[st].rank : st % w->p;
		int c = s->stages ? s->stages[st].chunk : st / w->p;
		if (r < 0 || r >= w->p || c < 0 || c >= w->v)
			return PPCC_EINPUT;
		x->stage_rank[st] = r;
		x->stage_chunk[st] = c;
		x->rank_stage[r * w->v + c] = st;
	}
	step_shape_half h = {.w = w, .lo = w->p, .hi = w->p};
	pthread_t beside;
	int two = 0, err;
	int64_t *n = w->ahead_on && w->p > 1
		     ? ppcc_malloc((size_t)w->p * sizeof *n) : NULL;
	if (n) {
		for (int r = 0; r < w->p; r++)
			n[r] = s->ranks[r].n_actions;
		h.lo = ppcc_sched_middle_rank(n, w->p);
		ppcc_free(n);
		h.y.stage_rank = x->stage_rank;
		h.y.stage_chunk = x->stage_chunk;
		h.y.vec_key = x->vec_key;
		h.y.op_count = x->op_count;
		h.y.mm_off = ppcc_calloc((size_t)w->p + 1 + (size_t)w->v, sizeof(int));
		if (h.y.mm_off) {
			h.y.mm_cnt = h.y.mm_off + w->p + 1;
			two = pthread_create(&beside, NULL, step_shape_half_run, &h) == 0;
		}
		if (!two) {
			ppcc_free(h.y.mm_off);
			h.lo = w->p;
		}
	}
	err = step_shape_ranks(x, w, 0, h.lo);
	if (two) {
		pthread_join(beside, NULL);
		/* a broken schedule is reported as such whichever half found it */
		if (h.err == PPCC_EINPUT || (err == 0 && h.err < 0))
			err = h.err;
		int joined = step_shape_join(x, &h, w->v, err >= 0);
		if (err >= 0)
			err = joined;
		if (err >= 0 && w->sp->probe)
			w->sp->probe->step_shape_halves++;
	}
	if (err < 0)
		return err;
	w->path_bound = w->p > 1;
	for (int r = 1; r < w->p && w->path_bound; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		const ppcc_action *a = rs->actions, *z = a + rs->n_actions - 1;
		if (rs->n_actions < 2 ||
		    a->op != PPCC_OP_RECV_F || a->stage != r || a->mb != 0 ||
		    z->op != PPCC_OP_SEND_B || z->stage != r || z->mb != w->m - 1)
			w->path_bound = 0;
	}
	/* and the backward must be whole (B, not I + W) on stages before */
	for (int st = 0; st < w->S && w->path_bound; st++)
		if (x->op_count[st * PPCC_OP_COUNT + PPCC_OP_B] != w->m)
			w->path_bound = 0;
	return 0;
}

/* The durations of stage st's actions under costs c. */
static double step_stage_total_of(const step_run *w, const ppcc_stage_cost *c,
				  int st)
{
	const int32_t *cnt = &w->x->op_count[st * PPCC_OP_COUNT];
	double t = 0;
	for (int op = 0; op < PPCC_OP_COUNT; op++)
		if (cnt[op])
			t += cnt[op] * step_op_ms(c, op, st);
	return t;
}

/* The same under x->costs. */
static double step_stage_total(const step_run *w, int st)
{
	return step_stage_total_of(w, w->x->costs, st);
}

/* The larger of the load and path bounds, from stage costs c and the
 * ranks' sums of action durations sum.  O(p). */
static double step_bound_of(const step_run *w, const ppcc_stage_cost *c,
			    const double *sum)
{
	double bound = 0;
	for (int r = 0; r < w->p; r++)
		bound = sum[r] > bound ? sum[r] : bound;
	if (w->path_bound) {
		double fill = 0, fill_comm = 0, drain = 0;
		for (int r = 1; r < w->p; r++) {
			/* fill: F_0..F_{r-1}, cf_0..cf_{r-2}; drain: B_0..B_{r-1},
			 * cb_1..cb_r */
			fill += ppcc_op_least_ms(&c[r - 1], PPCC_OP_F);
			if (r >= 2)
				fill_comm += c[r - 2].send_f_ms;
			drain += ppcc_op_least_ms(&c[r - 1], PPCC_OP_B) +
				 c[r].send_b_ms;
			double b = fill + fill_comm + sum[r] - c[r].send_b_ms + drain;
			bound = b > bound ? b : bound;
		}
	}
	/* below the exact value by more than the rounding of the sums */
	return bound * (1 - 1e-12);
}

/* The bound from x->costs and x->rank_sum (kept up to date by the
 * callers).  O(p). */
static double step_bound_now(const step_run *w)
{
	return step_bound_of(w, w->x->costs, w->x->rank_sum);
}

/* The bound for the costs in x->costs, recomputing the sums.  O(S). */
static double step_bound(const step_run *w)
{
	ppcc_step_ctx *x = w->x;
	for (int r = 0; r < w->p; r++)
		x->rank_sum[r] = 0;
	for (int st = 0; st < w->S; st++) {
		x->stage_total[st] = step_stage_total(w, st);
		x->rank_sum[x->stage_rank[st]] += x->stage_total[st];
	}
	return step_bound_now(w);
}

/* Stage st of the split in x->costs now holds layers i..j: its cost (and
 * the p2p time its neighbours receive from it), totals and rank sums. */
static int step_restage(step_run *w, int st, int i, int j)
{
	ppcc_step_ctx *x = w->x;
	int err = w->sp->stage_cost(w->sp->user, st, i, j, &x->costs[st]);
	if (err < 0)
		return err;
	for (int k = st - 1; k <= st + 1; k++) {
		if (k < 0 || k >= w->S)
			continue;
		double t = step_stage_total(w, k);
		x->rank_sum[x->stage_rank[k]] += t - x->stage_total[k];
		x->stage_total[k] = t;
	}
	return 0;
}

/* What one microbatch in flight (F done, B or W not) holds at most: its
 * stash, or W's part where that is larger. */
static double step_held(const ppcc_stage_cost *c)
{
	double w = c->stash_bytes - c->stash_input_bytes;
	return w > c->stash_bytes ? w : c->stash_bytes;
}

/* The most rank r's count vectors hold at once, chunk ch's microbatch
 * in flight holding held[ch]: max over its vectors k of sum_ch k_ch
 * held[ch], added in chunk order.  O(K v). */
static double step_most_held(const ppcc_step_ctx *x, const double *held,
			     int r, int v)
{
	double most = 0;
	for (int k = x->mm_off[r]; k < x->mm_off[r + 1]; k++) {
		const int *cnt = &x->mm_vec[(long)k * v];
		double sh = 0;
		for (int ch = 0; ch < v; ch++)
			sh += cnt[ch] * held[ch];
		most = sh > most ? sh : most;
	}
	return most;
}

/* Rank r's peak memory by the model: the static bytes of its chunks (and
 * under ZeRO-3 its gather buffers, its largest chunk's: simulate.c)
 * plus the largest stash over its count vectors.  O(K v). */
static double step_rank_peak(const step_run *w, const ppcc_stage_cost *c, int r)
{
	ppcc_step_ctx *x = w->x;
	int v = w->v;
	double st = 0, gather = 0, *held = x->held;
	for (int ch = 0; ch < v; ch++) {
		const ppcc_stage_cost *cc = &c[x->rank_stage[r * v + ch]];
		st += cc->static_bytes;
		gather = cc->zero3_param_bytes > gather ? cc->zero3_param_bytes : gather;
		held[ch] = step_held(cc);
	}
	st += gather;
	return st + step_most_held(x, held, r, v);
}

/* Rank r's modelled peak less its cap (-INFINITY without caps). */
static double step_rank_over(const step_run *w, const ppcc_stage_cost *c, int r)
{
	if (!w->sp->rank_cap)
		return -INFINITY;
	return step_rank_peak(w, c, r) - w->sp->rank_cap[r];
}

/* The bound of first with boundary b moved to at, from the state of
 * first (x->costs and sums), which it leaves as it found it.  O(p).
 * When over is not NULL, the larger overflow by the memory model of the
 * two ranks the move changes goes there. */
static int step_bound_moved(const step_run *cw, const int *first, int b,
			    int at, double *out, double *over)
{
	step_run *w = (step_run *)cw;
	ppcc_step_ctx *x = w->x;
	int S = w->S, lo = b - 1, hi = b;
	int end = b + 1 < S ? first[b + 1] - 1 : w->n - 1;
	ppcc_stage_cost keep[2] = {x->costs[lo], x->costs[hi]};
	double tot[4], sums[4];
	int ranks[4], n_saved = 0;
	for (int k = lo - 1; k <= hi + 1; k++)
		if (k >= 0 && k < S) {
			tot[n_saved] = x->stage_total[k];
			ranks[n_saved] = x->stage_rank[k];
			sums[n_saved++] = x->rank_sum[x->stage_rank[k]];
		}
	int err;
	if ((err = step_restage(w, lo, first[lo], at - 1)) < 0 ||
	    (err = step_restage(w, hi, at, end)) < 0)
		return err;
	*out = step_bound_now(w);
	if (over) {
		double o1 = step_rank_over(w, x->costs, x->stage_rank[lo]);
		double o2 = step_rank_over(w, x->costs, x->stage_rank[hi]);
		*over = o1 > o2 ? o1 : o2;
	}
	x->costs[lo] = keep[0];
	x->costs[hi] = keep[1];
	for (int k = lo - 1, i = 0; k <= hi + 1; k++)
		if (k >= 0 && k < S)
			x->stage_total[k] = tot[i++];
	for (int i = n_saved - 1; i >= 0; i--)
		x->rank_sum[ranks[i]] = sums[i];
	return 0;
}

/* The duration of one action of op on stage st, the stages' costs given
 * by pointers. */
static double step_op_ms_p(const ppcc_stage_cost *const *cp, int op, int st)
{
	if (op == PPCC_OP_RECV_F || op == PPCC_OP_RECV_B) {
		st += op == PPCC_OP_RECV_F ? -1 : 1;
		if (st < 0)
			return 0;
	}
	return ppcc_op_least_ms(cp[st], op);
}

static void step_model_finish(step_run *w, const ppcc_stage_cost *const *cp,
			      const double *known, model_key *k);

/* Models the split whose stage costs cp points to: loads into x->msum,
 * each rank's overflow into x->mpeak, the keys into *k.  The bound is
 * step_bound_of's, the peaks step_rank_peak's.  O(S + p K v); known as
 * step_model_finish takes it. */
static void step_model_p(step_run *w, const ppcc_stage_cost *const *cp,
			 const double *known, model_key *k)
{
	ppcc_step_ctx *x = w->x;
	int S = w->S;
	for (int r = 0; r < w->p; r++)
		x->msum[r] = 0;
	for (int st = 0; st < S; st++) {
		const int32_t *cnt = &x->op_count[st * PPCC_OP_COUNT];
		double t = 0;
		for (int op = 0; op < PPCC_OP_COUNT; op++)
			if (cnt[op])
				t += cnt[op] * step_op_ms_p(cp, op, st);
		x->msum[x->stage_rank[st]] += t;
	}
	step_model_finish(w, cp, known, k);
}

/* Rank r's overflow of its cap by the model (its static bytes, its
 * ZeRO-3 gather buffers and its most held stash over its count vectors,
 * less the cap; -INFINITY without caps), the stages' costs given by
 * pointers.  O(K v). */
static double step_model_over(const step_run *w,
			      const ppcc_stage_cost *const *cp, int r)
{
	ppcc_step_ctx *x = w->x;
	int v = w->v;
	if (!w->sp->rank_cap)
		return -INFINITY;
	double st = 0, gather = 0, *held = x->held;
	for (int ch = 0; ch < v; ch++) {
		const ppcc_stage_cost *cc = cp[x->rank_stage[r * v + ch]];
		st += cc->static_bytes;
		gather = cc->zero3_param_bytes > gather
			? cc->zero3_param_bytes : gather;
		held[ch] = step_held(cc);
	}
	st += gather;
	return st + step_most_held(x, held, r, v) - w->sp->rank_cap[r];
}

/* The keys of step_model_p from the loads in x->msum; with known (may be
 * NULL), rank r's overflow is known[r] unless x->vtouch[r] (the caller
 * vouches that known[r] is step_model_over's of these costs: the
 * rank's stages' costs are the ones it was computed from). */
static void step_model_finish(step_run *w, const ppcc_stage_cost *const *cp,
			      const double *known, model_key *k)
{
	ppcc_step_ctx *x = w->x;
	int p = w->p;
	w->evals++;
	/* step_bound_of, on pointers */
	double bound = 0;
	for (int r = 0; r < p; r++)
		bound = x->msum[r] > bound ? x->msum[r] : bound;
	k->load = bound;
	if (w->path_bound) {
		double fill = 0, fill_comm = 0, drain = 0;
		for (int r = 1; r < p; r++) {
			fill += ppcc_op_least_ms(cp[r - 1], PPCC_OP_F);
			if (r >= 2)
				fill_comm += cp[r - 2]->send_f_ms;
			drain += ppcc_op_least_ms(cp[r - 1], PPCC_OP_B) +
				 cp[r]->send_b_ms;
			double b = fill + fill_comm + x->msum[r] - cp[r]->send_b_ms + drain;
			bound = b > bound ? b : bound;
		}
	}
	k->bound = bound * (1 - 1e-12);
	k->over = -INFINITY;
	k->excess = 0;
	k->square = 0;
	for (int r = 0; r < p; r++) {
		double o = known && !x->vtouch[r] ? known[r]
			   : step_model_over(w, cp, r);
		x->mpeak[r] = o;
		k->over = o > k->over ? o : k->over;
		k->excess += o > 0 ? o : 0;
		k->square += x->msum[r] * x->msum[r];
	}
}

/* Models the split first, whose stages before from already have their
 * costs in x->mcost (from 0: none; a stage's costs depend on s and its
 * layers alone), as the last split modelled had them: a rank none of
 * whose stages is from or after keeps that split's overflow, in
 * x->mpeak.  O(S - from) stage costs and step_model_p. */
static int step_model_from(step_run *w, const int *first, int from,
			   model_key *k)
{
	ppcc_step_ctx *x = w->x;
	int err = 0, S = w->S;
	if (from <= 0)
		err = w->sp->costs(w->sp->user, first, x->mcost);
	for (int st = from > 0 ? from : S; st < S && err >= 0; st++)
		err = w->sp->stage_cost(w->sp->user, st, first[st],
					(st + 1 < S ? first[st + 1] : w->n) - 1,
					&x->mcost[st]);
	if (err < 0)
		return err;
	for (int st = 0; st < w->S; st++)
		x->mp[st] = &x->mcost[st];
	if (from <= 0) {
		step_model_p(w, x->mp, NULL, k);
		return 0;
	}
	for (int st = from; st < S; st++)
		x->vtouch[x->stage_rank[st]] = 1;
	step_model_p(w, x->mp, x->mpeak, k);
	for (int st = from; st < S; st++)
		x->vtouch[x->stage_rank[st]] = 0;
	return 0;
}

static int step_model(step_run *w, const int *first, model_key *k)
{
	return step_model_from(w, first, 0, k);
}

/* Stage st's actions' durations, its costs and its neighbours' those vp
 * points to, all within x->vcost. */
static double step_vtotal(const step_run *w, const ppcc_stage_cost *const *vp,
			  int st)
{
	const ppcc_step_ctx *x = w->x;
	const int32_t *cnt = &x->op_count[st * PPCC_OP_COUNT];
	double t = x->vown[vp[st] - x->vcost];
	if (cnt[PPCC_OP_RECV_F] && st > 0)
		t += cnt[PPCC_OP_RECV_F] * vp[st - 1]->send_f_ms;
	if (cnt[PPCC_OP_RECV_B] && st + 1 < w->S)
		t += cnt[PPCC_OP_RECV_B] * vp[st + 1]->send_b_ms;
	return t;
}

/* The costs of every stage of first as it is and as one move of a layer
 * can leave it, so that a move is modelled without computing a stage's
 * costs again; x->vp points to the stages as they are.  O(S) stage
 * costs. */
static int step_variants(step_run *w, const int *first)
{
	ppcc_step_ctx *x = w->x;
	int S = w->S, n = w->n, err;
	for (int st = 0; st < S; st++) {
		int i = first[st], j = st + 1 < S ? first[st + 1] - 1 : n - 1;
		ppcc_stage_cost *c = &x->vcost[(size_t)st * STEP_VARIANTS];
		int lo[STEP_VARIANTS] = {i, i - 1, i + 1, i, i + 1, i - 1, i};
		int hi[STEP_VARIANTS] = {j, j - 1, j + 1, j - 1, j, j, j + 1};
		for (int k = 0; k < STEP_VARIANTS; k++) {
			/* no valid split has stage st start before layer st or
			 * end after n - S + st: no move leaves it so */
			if (lo[k] < st || hi[k] > n - S + st || lo[k] > hi[k])
				continue;
			if ((err = w->sp->stage_cost(w->sp->user, st, lo[k], hi[k], &c[k])) < 0)
				return err;
		}
		x->vp[st] = &c[V_SAME];
		/* what a variant's own actions take (the receives are the
		 * neighbours' sends) */
		const int32_t *cnt = &x->op_count[st * PPCC_OP_COUNT];
		for (int k = 0; k < STEP_VARIANTS; k++)
			x->vown[(size_t)st * STEP_VARIANTS + k] =
				cnt[PPCC_OP_F] * ppcc_op_least_ms(&c[k], PPCC_OP_F) +
				cnt[PPCC_OP_B] * ppcc_op_least_ms(&c[k], PPCC_OP_B) +
				cnt[PPCC_OP_I] * c[k].bwd_input_ms +
				cnt[PPCC_OP_W] * c[k].bwd_weight_ms +
				cnt[PPCC_OP_SEND_F] * c[k].send_f_ms +
				cnt[PPCC_OP_SEND_B] * c[k].send_b_ms;
	}
	for (int r = 0; r < w->p; r++)
		x->vsum[r] = 0;
	for (int st = 0; st < S; st++) {
		x->vtot[st] = step_vtotal(w, x->vp, st);
		x->vsum[x->stage_rank[st]] += x->vtot[st];
	}
	for (int r = 0; r < w->p; r++)
		x->vover[r] = step_model_over(w, x->vp, r);
	return 0;
}

/* Models the move of one layer from stage a to stage b of the split
 * step_variants last saw (step_transfer's move, which the caller has
 * checked is one).  O(S + p K v). */
static void step_model_move(step_run *w, int a, int b, model_key *k)
{
	ppcc_step_ctx *x = w->x;
	const ppcc_stage_cost **vp = x->vp;
	const ppcc_stage_cost *vc = x->vcost;
	int lo = a < b ? a : b, hi = a < b ? b : a;
#define STEP_V(st, kind) (&vc[(size_t)(st) * STEP_VARIANTS + (kind)])
	vp[a] = STEP_V(a, a < b ? V_NO_LAST : V_NO_FIRST);
	vp[b] = STEP_V(b, a < b ? V_ONE_BEFORE : V_ONE_AFTER);
	for (int st = lo + 1; st < hi; st++)
		vp[st] = STEP_V(st, a < b ? V_LEFT : V_RIGHT);
	/* the loads change on the stages moved and their neighbours */
	memcpy(x->msum, x->vsum, (size_t)w->p * sizeof(double));
	int from = lo > 0 ? lo - 1 : 0, to = hi + 1 < w->S ? hi + 1 : hi;
	for (int st = from; st <= to; st++)
		x->msum[x->stage_rank[st]] += step_vtotal(w, vp, st) - x->vtot[st];
	/* the overflows change on the ranks of the stages moved alone */
	for (int st = lo; st <= hi; st++)
		x->vtouch[x->stage_rank[st]] = 1;
	step_model_finish(w, vp, w->sp->forget ? NULL : x->vover, k);
	for (int st = lo; st <= hi; st++) {
		x->vtouch[x->stage_rank[st]] = 0;
		vp[st] = STEP_V(st, V_SAME);
	}
#undef STEP_V
}

/* Within a byte of fitting by the model: the model and the simulator add
 * the same bytes in other orders. */
#define STEP_MODEL_SLACK 1.0

/* < 0 when a comes first: fitting, then the least overflow (when neither
 * fits), then the least bound in whole nanoseconds, then the most
 * balanced loads. */
static int step_model_cmp(const model_key *a, const model_key *b)
{
	int fa = a->over <= STEP_MODEL_SLACK, fb = b->over <= STEP_MODEL_SLACK;
	if (fa != fb)
		return fa ? -1 : 1;
	if (!fa && a->excess != b->excess)
		return a->excess < b->excess ? -1 : 1;
	int64_t la = llround(a->load * 1e6), lb = llround(b->load * 1e6);
	if (la != lb)
		return la < lb ? -1 : 1;
	int64_t ba = llround(a->bound * 1e6), bb = llround(b->bound * 1e6);
	if (ba != bb)
		return ba < bb ? -1 : 1;
	if (a->square < b->square * (1 - 1e-12))
		return -1;
	if (b->square < a->square * (1 - 1e-12))
		return 1;
	return 0;
}

/* The layers of stage a of first. */
static int step_size(const step_run *w, const int *first, int a)
{
	return (a + 1 < w->S ? first[a + 1] : w->n) - first[a];
}

/* first with one layer moved from stage a to stage b, the stages between
 * shifted by one so that every stage keeps its size but a (one less) and
 * b (one more), into out; 0 when a holds a single layer. */
static int step_transfer(const step_run *w, const int *first, int a, int b,
			 int *out)
{
	int S = w->S;
	if (step_size(w, first, a) < 2 || a == b)
		return 0;
	memcpy(out, first, (size_t)S * sizeof(int));
	if (a < b)
		for (int k = a + 1; k <= b; k++)
			out[k]--;
	else
		for (int k = b + 1; k <= a; k++)
			out[k]++;
	return 1;
}

/* While repairing: a fitting split first, then the least bound, then the
 * least overflow in all. */
static int step_repair_better(const model_key *a, const model_key *b)
{
	int fa = a->over <= STEP_MODEL_SLACK, fb = b->over <= STEP_MODEL_SLACK;
	if (fa != fb)
		return fa;
	if (a->load != b->load)
		return a->load < b->load;
	if (a->square != b->square)
		return a->square < b->square;
	return a->excess < b->excess;
}

/* Whether a round of step_model_descend that began with before models
 * counted has spent the whole of the models' budget: balancing's
 * (evals), or repairing's (repairs and this round's models). */
static int step_spent(const step_run *w, int fits, long before)
{
	return fits ? w->evals >= w->eval_budget
		    : w->repairs + (w->evals - before) >= w->eval_budget;
}

/* The model's descent from first (left there).  While the split does
 * not fit, the rank that overflows most gives a layer of one of its
 * chunks to a stage of a rank with room, the move that lowers the sum of
 * the overflows and leaves the least load (then the most balanced) being
 * taken; once it fits, the rank with the largest load gives one, to any
 * stage, the move that comes first in step_model_cmp's order and before
 * the current split being taken.  Every rank that overflows (or ties
 * for the largest load) is scored, largest first, and the best of all
 * their moves is taken.  Each round is O(v S) models a rank it takes
 * from; it stops at a local optimum, after max_rounds rounds, or when
 * the models' budget (limit) is spent, and a round stops where the whole
 * budget is (step_spent). */
static int step_model_descend(step_run *w, int *first, int max_rounds,
			      long limit)
{
	ppcc_step_ctx *x = w->x;
	int S = w->S, p = w->p, v = w->v, err;
	int *cand = x->mcand, *src = x->mrank;
	model_key ck, bk = {0}, k;
	if ((err = step_model(w, first, &ck)) < 0)
		return err;
	for (int round = 0; round < max_rounds; round++) {
		int fits = ck.over <= STEP_MODEL_SLACK, n_src = 0;
		/* repairing has a budget of its own, balancing its share */
		if (fits ? w->evals >= limit : w->repairs >= w->eval_budget)
			break;
		long before = w->evals;
		/* the ranks by overflow (not fitting) or load, largest first */
		for (int r = 0; r < p; r++) {
			double key = fits ? x->msum[r] : x->mpeak[r];
			if (!fits && !(key > STEP_MODEL_SLACK))
				continue;
			int at = n_src++;
			while (at > 0 && (fits ? x->msum[src[at - 1]]
					       : x->mpeak[src[at - 1]]) < key) {
				src[at] = src[at - 1];
				at--;
			}
			src[at] = r;
		}
		if (fits) /* only the ranks with the largest load */
			while (n_src > 1 && x->msum[src[n_src - 1]] < x->msum[src[0]] * (1 - 1e-9))
				n_src--;
		/* where a layer may go while repairing: ranks with room */
		unsigned char *room = (unsigned char *)x->mm_cnt;
		for (int r = 0; r < p; r++)
			room[r] = fits || x->mpeak[r] < 0;
		int have = 0, best_a = 0, best_b = 0;
		if ((err = step_variants(w, first)) < 0)
			return err;
		/* a round may end past the limit, but never past what is
		 * left of the whole budget: with many ranks tied for the
		 * largest load one round is n_src v S models */
		for (int i = 0; i < n_src; i++)
			for (int ch = 0; ch < v; ch++)
				for (int b = 0; b < S; b++) {
					if (step_spent(w, fits, before))
						goto scored;
					int a = x->rank_stage[src[i] * v + ch];
					if (a == b || !room[x->stage_rank[b]] || step_size(w, first, a) < 2)
						continue;
					step_model_move(w, a, b, &k);
					if (fits ? step_model_cmp(&k, &ck) >= 0 ||
						   (have && step_model_cmp(&k, &bk) >= 0)
						 : !(k.excess < ck.excess) ||
						   (have && !step_repair_better(&k, &bk)))
						continue;
					bk = k;
					best_a = a;
					best_b = b;
					have = 1;
				}
scored:
		if (!fits) {
			/* not counted against the budget of balancing */
			w->repairs += w->evals - before;
			w->evals = before;
		}
		if (!have)
			break;
		step_transfer(w, first, best_a, best_b, cand);
		memcpy(first, cand, (size_t)S * sizeof(int));
		if ((err = step_model(w, first, &ck)) < 0)
			return err;
	}
	return 0;
}

/* When no split of the seeds' descents fits by the model and every split
 * can be modelled within the budget: the first of every split in
 * step_model_cmp's order, into out (1), else 0.  Exact for the model. */
static int step_model_enumerate(step_run *w, int *out, long splits)
{
	int S = w->S, n = w->n, err;
	int *f = w->x->mcand;
	model_key bk = {0}, k;
	int have = 0;
	if (splits < 0 || w->evals + splits > w->eval_budget)
		return 0;
	for (int s = 0; s < S; s++)
		f[s] = s;
	/* after the first, the stages from changed on (s - 1 and after,
	 * f[s] having moved) get new costs; the others keep theirs */
	for (int changed = 0;;) {
		if ((err = step_model_from(w, f, changed, &k)) < 0)
			return err;
		if (!have || step_model_cmp(&k, &bk) < 0) {
			bk = k;
			memcpy(out, f, (size_t)S * sizeof(int));
			have = 1;
		}
		int s = S - 1;
		while (s >= 1 && f[s] == n - S + s)
			s--;
		if (s < 1)
			return 1;
		f[s]++;
		for (int t = s + 1; t < S; t++)
			f[t] = f[t - 1] + 1;
		changed = w->sp->forget ? 0 : s - 1;
	}
}

static int64_t step_quantise(double v)
{
	if (!(v < 9e18))
		return INT64_MAX;
	if (!(v > -9e18))
		return INT64_MIN;
	return (int64_t)llround(v);
}

static int step_cmp(const step_key *a, const int *fa, const step_key *b,
		    const int *fb, int S);

/* The per-rank arrays of est (busy, comm, idle, peak, and the
 * data-parallel channel's busy, end, gather and gather wait) and its
 * per-stage dp_ready_ms copied into out's, allocated in a first when
 * fresh, overwritten otherwise: est's point into the search's arena,
 * which is reset after the search. */
static int step_copy_arrays(ppcc_arena *a, ppcc_estimate *out,
			    const ppcc_estimate *est, int p, int S, int fresh)
{
	double *const *from[8] = {&est->busy_ms, &est->comm_ms, &est->idle_ms,
				  &est->peak_memory_bytes, &est->dp_busy_ms,
				  &est->dp_end_ms, &est->dp_gather_ms,
				  &est->dp_gather_wait_ms};
	double **to[8] = {&out->busy_ms, &out->comm_ms, &out->idle_ms,
			  &out->peak_memory_bytes, &out->dp_busy_ms,
			  &out->dp_end_ms, &out->dp_gather_ms,
			  &out->dp_gather_wait_ms};
	if (fresh) {
		for (int i = 0; i < 8; i++)
			if (!(*to[i] = ppcc_arena_alloc(a, (size_t)p, sizeof(double))))
				return PPCC_ENOMEM;
		if (!(out->dp_ready_ms = ppcc_arena_alloc(a, (size_t)S,
							  sizeof(double))))
			return PPCC_ENOMEM;
	}
	for (int i = 0; i < 8; i++)
		memcpy(*to[i], *from[i], (size_t)p * sizeof(double));
	memcpy(out->dp_ready_ms, est->dp_ready_ms, (size_t)S * sizeof(double));
	return 0;
}

/* With sp->best: when first (simulated as est, *k, the send times still
 * in the simulator's buffers work, the search's or the ahead's) comes
 * before every split simulated so far,
 * its estimate into sp->best, its arrays in sp->kept_arena (allocated on
 * the first call, overwritten after); its send times too, unless
 * sp->best_no_times. */
static int step_keep_least(step_run *w, const int *first,
			   const ppcc_estimate *est, const step_key *k,
			   const ppcc_sim_work *work)
{
	const ppcc_step_problem *sp = w->sp;
	if (!sp->best || !sp->kept_arena)
		return 0;
	if (w->least_have && step_cmp(k, first, &w->least, w->least_first, w->S) >= 0)
		return 0;
	ppcc_estimate *out = sp->best;
	size_t keys = (size_t)w->S * (size_t)w->m;
	int fresh = !w->least_first;
	if (fresh) {
		memset(out, 0, sizeof *out);
		if ((!sp->best_no_times &&
		     !(out->send_ms = ppcc_arena_alloc(sp->kept_arena, 2 * keys,
						       sizeof(double)))) ||
		    !(w->least_first = ppcc_arena_alloc(sp->kept_arena, (size_t)w->S,
							sizeof(int))))
			return PPCC_ENOMEM;
	}
	int err = step_copy_arrays(sp->kept_arena, out, est, w->p, w->S, fresh);
	if (err < 0)
		return err;
	if (!sp->best_no_times &&
	    (err = ppcc_sim_work_send_times(out->send_ms, work, keys)) < 0)
		return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
	out->step_ms = est->step_ms;
	out->bubble_fraction = est->bubble_fraction;
	out->bubble_analytic = est->bubble_analytic;
	out->dp_step_ms = est->dp_step_ms;
	out->start_ms = out->end_ms = NULL;
	memcpy(w->least_first, first, (size_t)w->S * sizeof(int));
	w->least = *k;
	w->least_have = 1;
	return 0;
}

/* The estimate of the split the caller asked to keep (sp->keep), copied
 * out of the search's arena before it is reset. */
static int step_keep(step_run *w, const int *first, const ppcc_estimate *est)
{
	const ppcc_step_problem *sp = w->sp;
	if (!sp->keep || !sp->kept || !sp->kept_arena || !sp->kept_have ||
	    *sp->kept_have ||
	    memcmp(first, sp->keep, (size_t)w->S * sizeof(int)) != 0)
		return 0;
	ppcc_estimate *out = sp->kept;
	*out = *est;
	int err = step_copy_arrays(sp->kept_arena, out, est, w->p, w->S, 1);
	if (err < 0)
		return err;
	out->start_ms = out->end_ms = NULL;
	out->send_ms = NULL;
	*sp->kept_have = 1;
	return 0;
}

/* The splits simulated in this search, with their keys.  Within one
 * search the stage costs are a function of the split (sp->costs, of the
 * same shape and the same user state), and the simulator of its costs,
 * so a split simulated before has the key it had then: step_sim returns
 * it without simulating again.  It still counts as a simulation (against
 * the budget and in res->simulations), so the search takes the path it
 * would take without the memo, to the same split.  Open addressing on
 * the split's layers; the table is forgotten at each search's start by a
 * new generation, not cleared. */
static uint64_t step_memo_hash(const int *first, int S)
{
	uint64_t h = 0x9e3779b97f4a7c15u;
	for (int s = 1; s < S; s++)
		h = (h ^ (uint64_t)(uint32_t)first[s]) * 0xff51afd7ed558ccdu;
	return h ^ (h >> 29);
}

static void step_memo_start(ppcc_step_ctx *x, int S)
{
	x->memo_n = 0;
	x->memo_S = S;
	if (++x->memo_now == 0) {
		/* the generations wrapped: every slot is old */
		if (x->memo_gen)
			memset(x->memo_gen, 0, (size_t)x->memo_slots * sizeof *x->memo_gen);
		x->memo_now = 1;
	}
}

/* The slot of first: its entry (>= 0), or -1 - the free slot it would
 * take. */
static long step_memo_find(const ppcc_step_ctx *x, const int *first)
{
	if (!x->memo_slots)
		return -1;
	int S = x->memo_S;
	long mask = x->memo_slots - 1;
	for (long i = (long)(step_memo_hash(first, S) & (uint64_t)mask);;
	     i = (i + 1) & mask) {
		if (x->memo_gen[i] != x->memo_now)
			return -1 - i;
		int32_t e = x->memo_slot[i];
		if (memcmp(&x->memo_split[(size_t)e * S], first,
			   (size_t)S * sizeof(int)) == 0)
			return e;
	}
}

/* Keeps first's key (the table grown to keep it at most half full). */
static int step_memo_add(ppcc_step_ctx *x, const int *first, const step_key *k)
{
	int S = x->memo_S;
	if (x->memo_n == x->memo_cap) {
		long cap = x->memo_cap ? 2 * x->memo_cap : 256;
		int *sp = ppcc_realloc(x->memo_split, (size_t)cap * S * sizeof *sp);
		if (!sp)
			return PPCC_ENOMEM;
		x->memo_split = sp;
		step_key *kp = ppcc_realloc(x->memo_key, (size_t)cap * sizeof *kp);
		if (!kp)
			return PPCC_ENOMEM;
		x->memo_key = kp;
		x->memo_cap = cap;
	}
	if (2 * (x->memo_n + 1) > x->memo_slots) {
		long slots = x->memo_slots ? 2 * x->memo_slots : 512;
		int32_t *sl = ppcc_calloc((size_t)slots, sizeof *sl);
		uint32_t *gen = ppcc_calloc((size_t)slots, sizeof *gen);
		if (!sl || !gen) {
			ppcc_free(sl);
			ppcc_free(gen);
			return PPCC_ENOMEM;
		}
		ppcc_free(x->memo_slot);
		ppcc_free(x->memo_gen);
		x->memo_slot = sl;
		x->memo_gen = gen;
		x->memo_slots = slots;
		for (long e = 0; e < x->memo_n; e++) {
			long at = -1 - step_memo_find(x, &x->memo_split[(size_t)e * S]);
			x->memo_slot[at] = (int32_t)e;
			x->memo_gen[at] = x->memo_now;
		}
	}
	long at = -1 - step_memo_find(x, first);
	memcpy(&x->memo_split[(size_t)x->memo_n * S], first, (size_t)S * sizeof(int));
	x->memo_key[x->memo_n] = *k;
	x->memo_slot[at] = (int32_t)x->memo_n++;
	x->memo_gen[at] = x->memo_now;
	return 0;
}

/* Simulates the split first with its costs in costs; fills *k. */
static void *step_ahead_main(void *arg)
{
	step_ahead *h = arg;
	h->err = ppcc_simulate_work(&h->est, h->arena, h->shape, h->costs, 0,
				    &h->sim);
	return NULL;
}

/* The search's simulation ahead, idle, sized for its splits (made on
 * first use); NULL when it may not run one, one is running, or there is
 * no memory for it. */
static step_ahead *step_ahead_idle(step_run *w)
{
	ppcc_step_ctx *x = w->x;
	step_ahead *h = x->ahead;
	if (!w->ahead_on || (h && h->running))
		return NULL;
	if (h && h->S < w->S) {
		step_ahead_free(h);
		h = x->ahead = NULL;
	}
	if (!h) {
		if (!(h = ppcc_calloc(1, sizeof *h)))
			return NULL;
		h->S = w->S;
		h->first = ppcc_malloc((size_t)w->S * sizeof *h->first);
		h->next = ppcc_malloc((size_t)w->S * sizeof *h->next);
		h->costs = ppcc_malloc((size_t)w->S * sizeof *h->costs);
		h->arena = ppcc_arena_new();
		if (!h->first || !h->next || !h->costs || !h->arena) {
			step_ahead_free(h);
			return NULL;
		}
		x->ahead = h;
	}
	return h;
}

/* Starts the simulation of split first on the second thread, when the
 * search may run one ahead, none is running and first is not one the
 * search remembers; nothing when it cannot (no memory, no thread): the
 * search then simulates first itself when it comes to it. */
static void step_ahead_start(step_run *w, const int *first)
{
	step_ahead *h = step_ahead_idle(w);
	if (!h || (!w->sp->forget && step_memo_find(w->x, first) >= 0) ||
	    w->sp->costs(w->sp->user, first, h->costs) < 0)
		return;
	memcpy(h->first, first, (size_t)w->S * sizeof *first);
	h->shape = w->shape;
	ppcc_arena_reset(h->arena);
	h->running = pthread_create(&h->thread, NULL, step_ahead_main, h) == 0;
}

/* Waits for the simulation running ahead, if any, and forgets it. */
static void step_ahead_drop(ppcc_step_ctx *x)
{
	step_ahead *h = x ? x->ahead : NULL;
	if (h && h->running) {
		pthread_join(h->thread, NULL);
		h->running = 0;
		ppcc_arena_reset(h->arena);
	}
}

/* Drops the simulation running ahead unless it is of split keep: the
 * search, past where it would have taken that one, cannot take it now. */
static void step_ahead_drop_other(step_run *w, const int *keep)
{
	step_ahead *h = w->x->ahead;
	if (h && h->running &&
	    memcmp(h->first, keep, (size_t)w->S * sizeof *keep) != 0)
		step_ahead_drop(w->x);
}

/* The simulation of split first with costs, when it is the one running
 * ahead and it succeeded: 1, its estimate in *est (its arrays in the
 * ahead's arena, which the caller resets) and its send times in *work;
 * 0 otherwise (one that failed, for memory say, is simulated again by
 * the caller, as if it had not run). */
static int step_ahead_take(step_run *w, const int *first,
			   const ppcc_stage_cost *costs, ppcc_estimate *est,
			   ppcc_sim_work **work)
{
	step_ahead *h = w->x->ahead;
	if (!h || !h->running ||
	    memcmp(h->first, first, (size_t)w->S * sizeof *first) != 0 ||
	    memcmp(h->costs, costs, (size_t)w->S * sizeof *costs) != 0)
		return 0;
	pthread_join(h->thread, NULL);
	h->running = 0;
	if (h->err < 0) {
		ppcc_arena_reset(h->arena);
		return 0;
	}
	*est = h->est;
	*work = h->sim;
	return 1;
}

static int step_sim(step_run *w, const int *first,
		    const ppcc_stage_cost *costs, step_key *k)
{
	ppcc_step_ctx *x = w->x;
	const ppcc_step_problem *sp = w->sp;
	ppcc_estimate est;
	int err;
	w->sims++;
	long memo = sp->forget ? -1 : step_memo_find(x, first);
	if (memo >= 0) {
		*k = x->memo_key[memo];
		w->remembered++;
		return 0;
	}
	ppcc_sim_work *work;
	ppcc_arena *arena = x->arena;
	if (step_ahead_take(w, first, costs, &est, &work)) {
		arena = x->ahead->arena;
		err = 0;
	} else {
		err = ppcc_simulate_work(&est, x->arena, w->shape, costs, 0,
					 &x->sim);
		work = x->sim;
	}
	if (err >= 0)
		err = step_keep(w, first, &est);
	if (err < 0) {
		ppcc_arena_reset(arena);
		return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
	}
	double over = -INFINITY, peak = 0, lo = INFINITY, hi = 0;
	for (int r = 0; r < w->p; r++) {
		double pk = est.peak_memory_bytes[r];
		double cap = sp->rank_cap ? sp->rank_cap[r] : INFINITY;
		if (pk - cap > over)
			over = pk - cap;
		if (pk > peak)
			peak = pk;
		double occ = est.busy_ms[r] + est.comm_ms[r];
		lo = occ < lo ? occ : lo;
		hi = occ > hi ? occ : hi;
	}
	k->fits = !(over > 0);
	k->over = k->fits ? 0 : step_quantise(ceil(over));
	k->step_ms = est.step_ms;
	k->step_ns = step_quantise(est.step_ms * 1e6);
	k->peak_bytes = peak;
	k->peak = step_quantise(peak);
	k->spread_ns = step_quantise((hi - lo) * 1e6);
	err = step_keep_least(w, first, &est, k, work);
	ppcc_arena_reset(arena);
	if (err)
		return err;
	return sp->forget ? 0 : step_memo_add(x, first, k);
}

/* Simulates the split first (its costs go to x->costs). */
static int step_eval(step_run *w, const int *first, step_key *k)
{
	int err = w->sp->costs(w->sp->user, first, w->x->costs);
	return err < 0 ? err : step_sim(w, first, w->x->costs, k);
}

/* The same, leaving x->costs (the current split's) alone: the costs go
 * to x->sim_costs, where only the stages whose layers differ from the
 * split simulated there before are recomputed (a stage's costs depend on
 * s and its layers alone, ppcc_stage_cost_fn), and a split step_memo
 * remembers takes none (sp->forget: all of them, each time). */
static int step_eval_keep(step_run *w, const int *first, step_key *k)
{
	ppcc_step_ctx *x = w->x;
	int S = w->S, err;
	if (!w->sp->forget) {
		long memo = step_memo_find(x, first);
		if (memo >= 0) {
			w->sims++;
			w->remembered++;
			*k = x->memo_key[memo];
			return 0;
		}
	}
	if (!w->sim_have || w->sp->forget) {
		if ((err = w->sp->costs(w->sp->user, first, x->sim_costs)) < 0)
			return err;
		w->sim_have = 1;
	} else {
		for (int s = 0; s < S; s++) {
			int end = s + 1 < S ? first[s + 1] : w->n;
			int was = s + 1 < S ? x->sim_first[s + 1] : w->n;
			if (first[s] == x->sim_first[s] && end == was)
				continue;
			if ((err = w->sp->stage_cost(w->sp->user, s, first[s], end - 1,
						     &x->sim_costs[s])) < 0) {
				w->sim_have = 0;
				return err;
			}
		}
	}
	memcpy(x->sim_first, first, (size_t)S * sizeof(int));
	return step_sim(w, first, x->sim_costs, k);
}

/* < 0 when (a, fa) comes first in the documented order, > 0 after. */
static int step_cmp(const step_key *a, const int *fa, const step_key *b,
		    const int *fb, int S)
{
	if (a->fits != b->fits)
		return a->fits ? -1 : 1;
	if (!a->fits && a->over != b->over)
		return a->over < b->over ? -1 : 1;
	if (a->step_ns != b->step_ns)
		return a->step_ns < b->step_ns ? -1 : 1;
	if (a->peak != b->peak)
		return a->peak < b->peak ? -1 : 1;
	if (a->spread_ns != b->spread_ns)
		return a->spread_ns < b->spread_ns ? -1 : 1;
	for (int s = S - 1; s > 0; s--)
		if (fa[s] != fb[s])
			return fa[s] > fb[s] ? -1 : 1;
	return 0;
}

/* C(n-1, S-1), or limit + 1 when it exceeds limit. */
static long step_count_splits(int n, int S, long limit)
{
	long long c = 1;
	int k = S - 1, top = n - 1;
	if (k > top - k)
		k = top - k;
	for (int i = 1; i <= k; i++) {
		c = c * (top - k + i) / i; /* exact: a binomial at each step */
		if (c > limit)
			return limit + 1;
	}
	return (long)c;
}

static int step_valid(const int *first, int n, int S)
{
	if (first[0] != 0)
		return 0;
	for (int s = 1; s < S; s++)
		if (first[s] <= first[s - 1] || first[s] >= n)
			return 0;
	return 1;
}

/* Keeps (first, k) in best when it comes first. */
static void step_offer(step_run *w, step_key *best, int *have,
		       const int *first, const step_key *k)
{
	if (!*have || step_cmp(k, first, best, w->x->best, w->S) < 0) {
		*best = *k;
		memcpy(w->x->best, first, (size_t)w->S * sizeof(int));
		*have = 1;
	}
}

static int step_enumerate(step_run *w, step_key *best, int *have)
{
	int S = w->S, n = w->n, err;
	int *f = w->x->trial;
	for (int s = 0; s < S; s++)
		f[s] = s;
	for (;;) {
		step_key k;
		if ((err = step_eval(w, f, &k)) < 0)
			return err;
		step_offer(w, best, have, f, &k);
		/* next combination of first[1..S-1] in lexicographic order */
		int s = S - 1;
		while (s >= 1 && f[s] == n - S + s)
			s--;
		if (s < 1)
			return 0;
		f[s]++;
		for (int t = s + 1; t < S; t++)
			f[t] = f[t - 1] + 1;
	}
}

/* When no boundary move helps cur (simulated as *ck, fitting): every move
 * of one layer from any stage to a stage that is not its neighbour
 * (a neighbour is a boundary move), modelled;
 * those that fit by the model and whose bound does not exceed the step are
 * simulated, the most promising by the model first (step_model_cmp's
 * order, the PPCC_STEP_MOVES best kept), until one comes before cur.
 * Returns 1 with it in out and *out_key, 0 when none did. */
static int step_transfers(step_run *w, const int *cur, const step_key *ck,
			  int *out, step_key *out_key)
{
	ppcc_step_ctx *x = w->x;
	int S = w->S, err, kept = 0;
	step_move *mv = x->moves;
	int *cand = x->mcand;
	if ((err = step_variants(w, cur)) < 0)
		return err;
	for (int a = 0; a < S && w->evals < w->eval_budget; a++)
		for (int b = 0; b < S; b++) {
			if ((b >= a - 1 && b <= a + 1) || step_size(w, cur, a) < 2)
				continue;
			model_key k;
			step_model_move(w, a, b, &k);
			if (k.over > STEP_MODEL_SLACK || k.bound > ck->step_ms + 1e-6)
				continue;
			if (kept == PPCC_STEP_MOVES &&
			    step_model_cmp(&k, &mv[kept - 1].k) >= 0)
				continue;
			int at = kept < PPCC_STEP_MOVES ? kept++ : kept - 1;
			while (at > 0 && step_model_cmp(&k, &mv[at - 1].k) < 0) {
				mv[at] = mv[at - 1];
				at--;
			}
			mv[at] = (step_move){k, a, b};
		}
	for (int i = 0; i < kept && w->sims < w->budget; i++) {
		step_key k;
		step_transfer(w, cur, mv[i].a, mv[i].b, cand);
		if ((err = step_eval_keep(w, cand, &k)) < 0)
			return err;
		if (step_cmp(&k, cand, ck, cur, S) < 0) {
			memcpy(out, cand, (size_t)S * sizeof(int));
			*out_key = k;
			return 1;
		}
	}
	return 0;
}

/* Descends from start (simulated as *start_key), offering what it finds. */
/* Starts ahead the move after (b, d) in step_descend's round from cur
 * that the round would simulate next as it stands (rk its best so far),
 * when there is one and a simulation can run ahead. */
static int step_descend_ahead(step_run *w, const int *cur, const step_key *rk,
			      int b, int d)
{
	int S = w->S, n = w->n, err;
	step_ahead *h = step_ahead_idle(w);
	if (!h)
		return 0;
	for (;;) {
		if (d < 0) {
			d = 1;
		} else {
			d = -1;
			b++;
		}
		if (b >= S)
			return 0;
		int at = cur[b] + d;
		int lo = cur[b - 1], hi = b + 1 < S ? cur[b + 1] : n;
		if (at <= lo || at >= hi)
			continue;
		if (rk->fits) {
			double bound, over;
			if ((err = step_bound_moved(w, cur, b, at, &bound, &over)) < 0)
				return err;
			if (bound > rk->step_ms + 1e-6 || over > STEP_MODEL_SLACK)
				continue;
		}
		memcpy(h->next, cur, (size_t)S * sizeof *cur);
		h->next[b] = at;
		step_ahead_start(w, h->next);
		return 0;
	}
}

static int step_descend(step_run *w, const int *start, const step_key *start_key,
			step_key *best, int *have)
{
	int S = w->S, n = w->n, err;
	ppcc_step_ctx *x = w->x;
	int *cur = x->cur, *cand = x->cand;
	memcpy(cur, start, (size_t)S * sizeof(int));
	step_key ck = *start_key;
	while (w->sims < w->budget) {
		int moved = 0;
		if ((err = w->sp->costs(w->sp->user, cur, x->costs)) < 0)
			return err;
		step_bound(w);
		step_key rk = ck;
		int *round_best = x->trial;
		memcpy(round_best, cur, (size_t)S * sizeof(int));
		for (int b = 1; b < S && w->sims < w->budget; b++) {
			for (int d = -1; d <= 1 && w->sims < w->budget; d += 2) {
				int at = cur[b] + d;
				int lo = cur[b - 1], hi = b + 1 < S ? cur[b + 1] : n;
				if (at <= lo || at >= hi)
					continue;
				memcpy(cand, cur, (size_t)S * sizeof(int));
				cand[b] = at;
				if (rk.fits) {
					/* the bound and the model rule it out
					 * without a simulation */
					double bound, over;
					if ((err = step_bound_moved(w, cur, b, at, &bound,
								    &over)) < 0)
						return err;
					if (bound > rk.step_ms + 1e-6 || over > STEP_MODEL_SLACK)
						continue;
				}
				/* the round's next simulation, beside this one:
				 * a guess the round then ruled out is dropped
				 * (later moves only meet a stricter filter) */
				if (w->ahead_on)
					step_ahead_drop_other(w, cand);
				if (w->sims + 1 < w->budget &&
				    (err = step_descend_ahead(w, cur, &rk, b, d)) < 0)
					return err;
				step_key k;
				if ((err = step_eval_keep(w, cand, &k)) < 0)
					return err;
				if (step_cmp(&k, cand, &rk, round_best, S) < 0) {
					rk = k;
					memcpy(round_best, cand, (size_t)S * sizeof(int));
					moved = 1;
				}
			}
		}
		if (!moved && ck.fits && w->sims < w->budget) {
			int err2 = step_transfers(w, cur, &ck, round_best, &rk);
			if (err2 < 0)
				return err2;
			moved = err2;
		}
		if (!moved)
			break;
		memcpy(cur, round_best, (size_t)S * sizeof(int));
		ck = rk;
		step_offer(w, best, have, cur, &ck);
	}
	return 0;
}

/* Descends on the bound alone (no simulation): from first, each round
 * moves to the neighbour (one boundary, one layer) with the least bound,
 * while that is below the current one; at most max_rounds rounds.
 * Leaves the split in first. */
static int step_bound_descend(step_run *w, int *first, int max_rounds)
{
	int S = w->S, n = w->n, err;
	ppcc_step_ctx *x = w->x;
	if ((err = w->sp->costs(w->sp->user, first, x->costs)) < 0)
		return err;
	double cur = step_bound(w);
	/* from a split that fits by the model, only to splits that do */
	int fits = 1;
	for (int r = 0; r < w->p; r++)
		fits &= step_rank_over(w, x->costs, r) <= STEP_MODEL_SLACK;
	for (int round = 0; round < max_rounds; round++) {
		int best_b = -1, best_at = 0;
		double best = cur;
		for (int b = 1; b < S; b++) {
			int lo = first[b - 1], hi = b + 1 < S ? first[b + 1] : n;
			for (int d = -1; d <= 1; d += 2) {
				int at = first[b] + d;
				if (at <= lo || at >= hi)
					continue;
				double v, over;
				if ((err = step_bound_moved(w, first, b, at, &v, &over)) < 0)
					return err;
				if (fits && over > STEP_MODEL_SLACK)
					continue;
				if (v < best) {
					best = v;
					best_b = b;
					best_at = at;
				}
			}
		}
		if (best_b < 0)
			break;
		int end = best_b + 1 < S ? first[best_b + 1] - 1 : n - 1;
		if ((err = step_restage(w, best_b - 1, first[best_b - 1], best_at - 1)) < 0 ||
		    (err = step_restage(w, best_b, best_at, end)) < 0)
			return err;
		first[best_b] = best_at;
		cur = step_bound_now(w);
	}
	return 0;
}

/* 1 when split f is one of the n in list. */
static int step_seen(const int *const *list, int n, const int *f, int S)
{
	for (int k = 0; k < n; k++)
		if (memcmp(list[k], f, (size_t)S * sizeof(int)) == 0)
			return 1;
	return 0;
}

/* Inserts seed i into order (n of them), by the documented order. */
static void step_insert(int *order, int *n, int i, const int *const *all,
			const step_key *keys, int S)
{
	int at = (*n)++;
	while (at > 0 && step_cmp(&keys[i], all[i], &keys[order[at - 1]],
				  all[order[at - 1]], S) < 0) {
		order[at] = order[at - 1];
		at--;
	}
	order[at] = i;
}

static int step_search(int *out_first, ppcc_step_result *res,
		       ppcc_step_ctx **ctx, const ppcc_step_problem *sp)
{
	int err;
	if (!out_first || !res || !ctx || !sp || !sp->shape || !sp->costs ||
	    !sp->stage_cost)
		return PPCC_EINPUT;
	const ppcc_schedule *shape = sp->shape;
	int n = sp->n_layers, S = shape->n_stages, p = shape->n_ranks;
	if (n < S || S < 1 || p < 1 || S % p != 0 || shape->n_microbatches < 1)
		return PPCC_EINPUT;
	if ((err = step_ctx_reserve(ctx, n, S, p)) < 0)
		return err;
	step_run w = {0};
	w.x = *ctx;
	w.sp = sp;
	w.shape = shape;
	w.n = n;
	w.S = S;
	w.p = p;
	w.m = shape->n_microbatches;
	/* the budget: max_sims, else as many simulations as fit in
	 * PPCC_STEP_ACTIONS simulated actions, at least PPCC_STEP_MIN_SIMS */
	long actions = 0;
	for (int r = 0; r < p; r++)
		actions += shape->ranks[r].n_actions;
	w.budget = sp->max_sims > 0 ? sp->max_sims
		 : (long)(PPCC_STEP_ACTIONS / (actions > 0 ? actions : 1));
	if (sp->max_sims <= 0 && w.budget < PPCC_STEP_MIN_SIMS)
		w.budget = PPCC_STEP_MIN_SIMS;
	w.ahead_on = sp->threads > 1 &&
		     actions >= ppcc_step_ahead_from(sp->probe);
	w.v = S / p;
	if ((err = step_shape(&w)) < 0)
		return err;
	step_memo_start(w.x, S);
	/* the models' budget: PPCC_STEP_MODEL_WORK steps of O(S + p K v) */
	w.eval_budget = PPCC_STEP_MODEL_WORK /
			(S + (long)w.v * w.x->mm_off[p] + 1);
	if (w.eval_budget < PPCC_STEP_MIN_SIMS)
		w.eval_budget = PPCC_STEP_MIN_SIMS;

	memset(res, 0, sizeof *res);
	if (sp->best_have)
		*sp->best_have = 0;
	step_key best = {0};
	int have = 0;
	long splits = step_count_splits(n, S, w.budget);
	if (splits <= w.budget) {
		if ((err = step_enumerate(&w, &best, &have)) < 0)
			return err;
		res->exact = 1;
	} else {
		/* every seed simulated; then the model's descent from each
		 * (repairing it first when it does not fit), simulated while
		 * the budget lasts; then, best first, each improved on the
		 * bound alone and simulated, and a descent from it while the
		 * budget lasts */
		enum { MAXS = 2 * PPCC_STEP_MAX_SEEDS + 1 };
		const int *all[MAXS];
		step_key keys[MAXS];
		int order[MAXS], n_all = 0, n_order = 0;
		if (sp->n_seeds > PPCC_STEP_MAX_SEEDS)
			return PPCC_EINPUT;
		for (int i = 0; i < sp->n_seeds; i++) {
			if (!sp->seeds[i])
				continue; /* a seed the caller did not have */
			if (!step_valid(sp->seeds[i], n, S))
				return PPCC_EINPUT;
			if (step_seen(all, n_all, sp->seeds[i], S))
				continue;
			all[n_all++] = sp->seeds[i];
		}
		if (!n_all)
			return PPCC_EINPUT;
		int n_given = n_all;
		for (int i = 0; i < n_given; i++) {
			if (i + 1 < n_given)
				step_ahead_start(&w, all[i + 1]);
			if ((err = step_eval(&w, all[i], &keys[i])) < 0)
				return err;
			step_offer(&w, &best, &have, all[i], &keys[i]);
			step_insert(order, &n_order, i, all, keys, S);
		}
		/* the seeds that do not fit first: repairing them comes first */
		int any_fits = 0, by_fit[MAXS], n_fit = 0;
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < n_given; k++)
				if (keys[order[k]].fits == pass)
					by_fit[n_fit++] = order[k];
		for (int k = 0; k < n_given; k++) {
			int *f = w.x->mseed + (size_t)k * (size_t)(S + 1);
			memcpy(f, all[by_fit[k]], (size_t)S * sizeof(int));
			/* an even share of what is left of the models' budget */
			long limit = w.evals + (w.eval_budget - w.evals) / (n_given - k) / 2;
			if ((err = step_model_descend(&w, f, 4 * S + 4, limit)) < 0)
				return err;
			model_key mk;
			if ((err = step_model(&w, f, &mk)) < 0)
				return err;
			any_fits |= mk.over <= STEP_MODEL_SLACK;
			if (!step_seen(all, n_all, f, S))
				all[n_all++] = f;
		}
		if (!any_fits) {
			/* small enough to model every split */
			int *f = w.x->mseed + (size_t)PPCC_STEP_MAX_SEEDS * (size_t)(S + 1);
			long count = step_count_splits(n, S, w.eval_budget);
			if ((err = step_model_enumerate(&w, f, count)) < 0)
				return err;
			if (err == 1 && !step_seen(all, n_all, f, S)) {
				/* simulated first of the splits the model found */
				memmove(&all[n_given + 1], &all[n_given],
					(size_t)(n_all - n_given) * sizeof *all);
				all[n_given] = f;
				n_all++;
			}
		}
		for (int i = n_given; i < n_all && (w.sims < w.budget ||
						     (i == n_given && !any_fits)); i++) {
			if (i + 1 < n_all && w.sims + 1 < w.budget)
				step_ahead_start(&w, all[i + 1]);
			if ((err = step_eval(&w, all[i], &keys[i])) < 0)
				return err;
			step_offer(&w, &best, &have, all[i], &keys[i]);
			step_insert(order, &n_order, i, all, keys, S);
		}
		int *f = w.x->seed;
		for (int k = 0; k < n_order && w.sims < w.budget; k++) {
			const int *from = all[order[k]];
			step_key fk = keys[order[k]];
			memcpy(f, from, (size_t)S * sizeof(int));
			if (fk.fits) {
				if ((err = step_bound_descend(&w, f, 4 * S)) < 0)
					return err;
				if (memcmp(f, from, (size_t)S * sizeof(int)) != 0) {
					step_key k2;
					if ((err = step_eval(&w, f, &k2)) < 0)
						return err;
					step_offer(&w, &best, &have, f, &k2);
					if (step_cmp(&k2, f, &fk, from, S) < 0)
						fk = k2;
					else
						memcpy(f, from, (size_t)S * sizeof(int));
				}
			}
			if ((err = step_descend(&w, f, &fk, &best, &have)) < 0)
				return err;
		}
	}
	res->simulations = w.sims;
	res->remembered = w.remembered;
	res->models = w.evals + w.repairs;
	res->model_budget = w.eval_budget;
	res->path_bound = w.path_bound;
	res->budget = w.budget;
	res->splits = splits <= w.budget ? splits : -1;
	res->step_ms = best.step_ms;
	res->peak_bytes = best.peak_bytes;
	res->lower_bound_ms = sp->lower_bound_ms;
	memcpy(out_first, w.x->best, (size_t)S * sizeof(int));
	/* the least split simulated is the one returned unless the search
	 * passed it over (then the caller simulates its own) */
	if (sp->best && sp->best_have && w.least_have &&
	    memcmp(w.least_first, w.x->best, (size_t)S * sizeof(int)) == 0)
		*sp->best_have = 1;
	return best.fits ? 0 : PPCC_EINFEASIBLE;
}

int ppcc_partition_step(int *out_first, ppcc_step_result *res,
			ppcc_step_ctx **ctx, const ppcc_step_problem *sp)
{
	int err = step_search(out_first, res, ctx, sp);
	step_ahead_drop(ctx ? *ctx : NULL);
	return err;
}

/* The run of the split first alone (no search): the context reserved,
 * the shape's model built and first's stage costs in x->costs. */
static int step_run_split(step_run *w, ppcc_step_ctx **ctx,
			  const ppcc_step_problem *sp, const int *first)
{
	const ppcc_schedule *shape = sp->shape;
	int err = step_ctx_reserve(ctx, sp->n_layers, shape->n_stages,
				   shape->n_ranks);
	if (err < 0)
		return err;
	memset(w, 0, sizeof *w);
	w->x = *ctx;
	w->sp = sp;
	w->shape = shape;
	w->n = sp->n_layers;
	w->S = shape->n_stages;
	w->p = shape->n_ranks;
	w->m = shape->n_microbatches;
	w->v = w->S / w->p;
	if ((err = step_shape(w)) < 0)
		return err;
	err = sp->costs(sp->user, first, w->x->costs);
	return err < 0 ? err : 0;
}

double ppcc_step_split_bound(ppcc_step_ctx **ctx, const ppcc_step_problem *sp,
			     const int *first)
{
	step_run w;
	if (step_run_split(&w, ctx, sp, first) < 0)
		return NAN;
	return step_bound(&w);
}

int ppcc_step_split_peaks(double *out_peaks, ppcc_step_ctx **ctx,
			  const ppcc_step_problem *sp, const int *first)
{
	step_run w;
	int err = step_run_split(&w, ctx, sp, first);
	if (err < 0)
		return err;
	for (int r = 0; r < w.p; r++)
		out_peaks[r] = step_rank_peak(&w, w.x->costs, r);
	return 0;
}
