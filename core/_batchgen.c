/* nardy.core._batchgen: the move generator's searches in C, for batches.
 *
 * nardy.core.batch.legal_results hands this module a list of (position, dice) pairs of a rule set
 * that the fast path answers (MoveGenerator.fast in core/movegen.py: order-free steps, no quarter,
 * trap or pinning rule), the ordered search or the pinning search (below). For each pair it writes
 * the legal results straight into byte buffers: no Python object per result. It is a line-by-line
 * translation of MoveGenerator._fast, _fast_two, _fast_equal and _MultisetSearch.search, so it
 * gives the same results in the same order with the same representative steps (core/movegen.py is
 * the reference; tests/core/test_batchgen.py compares).
 *
 * For the ordered search's rule sets (MoveGenerator.ordered: order-dependent rules without
 * hitting; nardgammon, mad, mad_gulbar, fevga, giul) it translates MoveGenerator._ordered: the
 * shortcuts to the fast path's loops (_order_free_now, _ordered_fast_two, _ordered_fast_equal),
 * _ordered_two, _ordered_equal with _OrderedSearch, the trap filter, and the general search
 * (_search) for the one case the ordered search hands to it (no play uses both of two different
 * dice).
 *
 * For the pinning rule sets (MoveGenerator.pins: plakoto, RULES.md §3.12.2) it translates
 * MoveGenerator._pinning: _mother_order, _pin_two and _PinSearch. The board then
 * carries the pinned points' bits at b[PINS], and a result's key (KEY bytes) carries them after
 * its 28 board bytes; they are written to their own buffer (ResultBatch.pinned). A game the mother
 * rule ended goes to Python, which says so.
 *
 * With an index buffer each pair's results are written sorted by board instead (the learning
 * environments' canonical action order), with each one's index in legal_plays' order.
 *
 * Where the Python fast path gives up (returns None: every longest play fails the six-block end
 * check) or the pair is not the common case (a malformed position or dice, a finished game), the C
 * code stops and returns the pair's index: Python answers that pair (and raises its errors).
 *
 * The board is core/movegen.py's: 28 ints seen from the mover, b[0] his borne-off count, b[1..24]
 * the points (positive his, negative the opponent's), b[25] his bar, b[26] the opponent's bar,
 * b[27] the opponent's borne-off count, and b[28] the pinned points' bits (0 without pins). A
 * play's steps are 4 x (source, destination, hit), -1 where the play has fewer steps
 * (nardy.core.batch's layout).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define BOARD 28
#define STEP_BYTES 12
#define BAR 25
#define OPP_BAR 26
#define OPP_OFF 27
#define HEAD 24
#define NO_LIMIT 99
#define PINS 28 /* b[PINS]: the pinned points' bits (core/movegen.py's PINS) */
#define KEY 32  /* a result's key: the 28 board bytes and the pinned points' bits (uint32) */

/* -- results: an insertion-ordered map from result board to steps (a Python dict's semantics) -- */

typedef struct {
    int8_t board[KEY]; /* the result board, then its pinned points' bits (native uint32) */
    int8_t steps[STEP_BYTES];
    int8_t alive; /* cleared by a filter (the six-block end check, the larger-die rule) */
    int8_t used, larger; /* the general search's dice used, and "reachable by the larger die" */
} Entry;

typedef struct {
    Entry *items;
    Py_ssize_t n, cap;
    uint32_t *slots;  /* open addressing: index of an item, valid where stamps[i] == stamp */
    uint32_t *stamps; /* clearing the map is one increment of stamp */
    size_t mask;
    uint32_t stamp;
} Map;

static uint64_t hash_board(const int8_t *k) {
    uint64_t a, b, c;
    uint64_t d;
    memcpy(&a, k, 8);
    memcpy(&b, k + 8, 8);
    memcpy(&c, k + 16, 8);
    memcpy(&d, k + 24, 8);
    uint64_t h = a * 0x9E3779B97F4A7C15ULL;
    h = (h ^ (h >> 29) ^ b) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 31) ^ c) * 0x94D049BB133111EBULL;
    h = (h ^ (h >> 29) ^ d) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

static int map_init(Map *m) {
    m->cap = 256;
    m->items = PyMem_Malloc(sizeof(Entry) * m->cap);
    m->mask = 1023;
    m->slots = PyMem_Malloc(sizeof(uint32_t) * (m->mask + 1));
    m->stamps = PyMem_Calloc(m->mask + 1, sizeof(uint32_t));
    m->stamp = 1;
    m->n = 0;
    return m->items && m->slots && m->stamps ? 0 : -1;
}

static void map_clear(Map *m) {
    m->n = 0;
    if (++m->stamp == 0) { /* wrapped: forget every old stamp */
        memset(m->stamps, 0, sizeof(uint32_t) * (m->mask + 1));
        m->stamp = 1;
    }
}

/* The index of board's item, or -1; *slot is where it is, or where it would go. */
static Py_ssize_t map_find(const Map *m, const int8_t *board, size_t *slot) {
    size_t i = (size_t)hash_board(board) & m->mask;
    while (m->stamps[i] == m->stamp) {
        uint32_t j = m->slots[i];
        if (memcmp(m->items[j].board, board, KEY) == 0) {
            *slot = i;
            return j;
        }
        i = (i + 1) & m->mask;
    }
    *slot = i;
    return -1;
}

/* Room for one more item (growing the table at half load): 1 when the table was rebuilt (a slot
 * found before is stale), 0 when not, -1 when out of memory. */
static int map_reserve(Map *m) {
    if (m->n == m->cap) {
        Entry *items = PyMem_Realloc(m->items, sizeof(Entry) * m->cap * 2);
        if (!items)
            return -1;
        m->items = items;
        m->cap *= 2;
    }
    if ((size_t)(m->n + 1) * 2 > m->mask + 1) {
        size_t size = (m->mask + 1) * 2;
        uint32_t *slots = PyMem_Malloc(sizeof(uint32_t) * size);
        uint32_t *stamps = PyMem_Calloc(size, sizeof(uint32_t));
        if (!slots || !stamps) {
            PyMem_Free(slots);
            PyMem_Free(stamps);
            return -1;
        }
        PyMem_Free(m->slots);
        PyMem_Free(m->stamps);
        m->slots = slots;
        m->stamps = stamps;
        m->mask = size - 1;
        m->stamp = 1;
        for (Py_ssize_t j = 0; j < m->n; j++) {
            size_t i = (size_t)hash_board(m->items[j].board) & m->mask;
            while (stamps[i] == 1)
                i = (i + 1) & m->mask;
            stamps[i] = 1;
            slots[i] = (uint32_t)j;
        }
        return 1;
    }
    return 0;
}

/* Appends a new item at slot (from map_find); its steps are left to the caller. */
static Entry *map_append(Map *m, const int8_t *board, size_t slot) {
    Entry *e = &m->items[m->n];
    memcpy(e->board, board, KEY);
    e->alive = 1;
    m->stamps[slot] = m->stamp;
    m->slots[slot] = (uint32_t)m->n++;
    return e;
}

/* Appends a new item for key, not in the map, at slot (from map_find), growing the map first where
 * it is full (the slot found again); NULL when out of memory. Its steps are left to the caller. */
static Entry *map_insert(Map *m, const int8_t *key, size_t slot) {
    const int grown = map_reserve(m);
    if (grown < 0)
        return NULL;
    if (grown)
        map_find(m, key, &slot);
    return map_append(m, key, slot);
}

/* -- the generator's state ------------------------------------------------------------------- */

typedef struct {
    /* The rule set (MoveGenerator's attributes). */
    int checkers;  /* RULES.md §3.11: N, the checkers of each side */
    int closed_at; /* b[t] <= closed_at: point t is closed (§2.2: >= 2 or >= 1 opposing checkers) */
    int blot;      /* a landing point's value that means a hit: -1 with hitting, else never (99) */
    int exact;     /* the exact bear-off rule (§2.2) */
    int head_limit; /* §3.3.3, NO_LIMIT for none */
    int first_turn; /* §3.3.4: 0 principle, 1 fixed, 2 head_only */
    int block_end;  /* the six-block rule checked at the end of the segment (§3.3.5) */
    /* The ordered search's rules (MoveGenerator.ordered: order-dependent rules without hitting). */
    int ordered;    /* the rule set is the ordered search's, not the fast path's */
    int block_step; /* the six-block rule checked after every step (§3.3.5) */
    int home_moves; /* §2.2 moves inside home: 0 always, 1 never, 2 until all home */
    int runner;     /* Fevga's runner rule (§3.9) */
    int quarter;    /* Fevga's quarter rule (§3.9): 0 none, 1 every step, 2 end of the segment */
    int trap;       /* Fevga's trap rule (§3.9, §2.3 item 6) */
    /* The pinning search's rules (MoveGenerator.pins: plakoto, §3.12.2). */
    int pins;     /* landing on a lone opposing checker pins it (no hitting) */
    int mother;   /* the mother rule: 0 off, 1 standard, 2 simple */
    int opp_head; /* the opponent's own 24 in the mover's coordinates (his mother's point) */
    /* The segment. */
    int b[BOARD + 1]; /* b[PINS]: the pinned points' bits (0 without pins) */
    int block_points[24]; /* my points on O's path below his lowest checker (six-block check) */
    int block_count;      /* 0: no block can be illegal */
    int end_blocks;       /* the six-block end check applies to this segment (block_count > 0) */
    int start[BOARD + 1]; /* the segment's start board */
    Map plays, singles, larger;
    Map *result; /* the map holding the answer (plays or singles) */
    int path[4][3]; /* the steps of the node being searched, one per depth */
    /* The equal dice search (_MultisetSearch). */
    int die, total, last, best, board_end, count;
    int movable[26];
    /* The pinning search (_pin_two, _PinSearch). */
    int live; /* the mother rule can end the game in this segment */
} Gen;

static void key_of(const int *b, int8_t *key) {
    for (int i = 0; i < BOARD; i++)
        key[i] = (int8_t)b[i];
    const uint32_t pins = (uint32_t)b[PINS];
    memcpy(key + BOARD, &pins, sizeof pins);
}

static void set_steps(int8_t *out, int (*path)[3], int depth, const int *step) {
    int i = 0;
    for (; i < depth && i < 4; i++) { /* a segment has at most four steps */
        out[3 * i] = (int8_t)path[i][0];
        out[3 * i + 1] = (int8_t)path[i][1];
        out[3 * i + 2] = (int8_t)path[i][2];
    }
    if (step && i < 4) {
        out[3 * i] = (int8_t)step[0];
        out[3 * i + 1] = (int8_t)step[1];
        out[3 * i + 2] = (int8_t)step[2];
        i++;
    }
    memset(out + 3 * i, -1, (size_t)(STEP_BYTES - 3 * i));
}

/* plays.setdefault(tuple(b), path[:depth] + (step,)); -1 when out of memory. */
static int setdefault(Map *m, const int8_t *key, int (*path)[3], int depth, const int *step) {
    size_t slot;
    if (map_find(m, key, &slot) >= 0)
        return 0;
    Entry *e = map_insert(m, key, slot);
    if (!e)
        return -1;
    set_steps(e->steps, path, depth, step);
    return 0;
}

static int setdefault_board(Map *m, const int *b, int (*path)[3], int depth, const int *step) {
    int8_t key[KEY];
    key_of(b, key);
    return setdefault(m, key, path, depth, step);
}

/* "the mover has no checker on any point higher than p" (§2.2, standard bear-off), negated. */
static int checker_above(const int *b, int p) {
    for (int q = p + 1; q <= 6; q++)
        if (b[q] > 0)
            return 1;
    return 0;
}

/* Whether six consecutive block points hold the mover's checkers (an illegal block, §3.3.5). */
static int has_run_of_six(const int8_t *key, const Gen *g) {
    int run = 0;
    for (int i = 0; i < g->block_count; i++) {
        if (key[g->block_points[i]] > 0) {
            if (++run == 6)
                return 1;
        } else
            run = 0;
    }
    return 0;
}

/* §2.3 item 3, the six-block end check: drops the results that fail it; how many remain. */
static Py_ssize_t filter_blocks(Map *m, const Gen *g) {
    Py_ssize_t kept = 0;
    for (Py_ssize_t j = 0; j < m->n; j++) {
        Entry *e = &m->items[j];
        if (e->alive && has_run_of_six(e->board, g))
            e->alive = 0;
        kept += e->alive;
    }
    return kept;
}

/* The answer "N = 0, the empty play" (§2.3: "If N = 0 the only legal play is the empty play"). */
static int no_play(Gen *g) {
    map_clear(&g->plays);
    if (setdefault_board(&g->plays, g->b, g->path, 0, NULL) < 0)
        return -2;
    g->result = &g->plays;
    return 0;
}

#define FALLBACK (-1) /* the Python generator answers this pair */
#define NO_MEMORY (-2)

/* -- two different dice (MoveGenerator._fast_two) --------------------------------------------- */

/* The mover's points, descending, and (returned) his checkers outside home (points 7..24). */
/* _hit_step: moves the mover's checker from p to t (t < 1: off), a legal step of a rule set
 * without pins; a blot there (§2.2: "a step onto a point with exactly one opposing checker hits
 * it"; blot is -1 where the rule set hits, else a value no point has) goes to the opponent's bar.
 * Returns t's count before the step (0 for a bear-off), for hit_unstep. */
static int hit_step(int *b, int p, int t, int blot) {
    b[p]--;
    if (t < 1) {
        b[0]++;
        return 0;
    }
    const int v = b[t];
    if (v == blot) {
        b[t] = 1;
        b[OPP_BAR]++;
    } else
        b[t] = v + 1;
    return v;
}

/* Undoes hit_step from p to t, which held v. */
static void hit_unstep(int *b, int p, int t, int v, int blot) {
    b[p]++;
    if (t < 1)
        b[0]--;
    else {
        b[t] = v;
        if (v == blot)
            b[OPP_BAR]--;
    }
}

/* _OneDie.add: a one-die candidate, the board b after the first step s1 of the larger die or not
 * (it matters only if no play uses both dice); a result both dice reach keeps its first place and
 * the larger die's step. *have_singles says whether g->singles and g->larger hold this segment's
 * candidates yet (they are cleared for its first). -1 when out of memory. */
static int add_single(Gen *g, int *have_singles, const int *b, int by_larger, int (*s1)[3]) {
    int8_t key[KEY];
    size_t slot;
    if (!*have_singles) {
        *have_singles = 1;
        map_clear(&g->singles);
        map_clear(&g->larger);
    }
    key_of(b, key);
    if (!by_larger)
        return setdefault(&g->singles, key, s1, 1, NULL);
    if (map_find(&g->larger, key, &slot) >= 0)
        return 0;
    /* by_larger.add(key); singles[key] = (s1,) (replacing the steps, keeping the place of a
     * result the smaller die reached first) */
    if (setdefault(&g->larger, key, NULL, 0, NULL) < 0)
        return -1;
    const Py_ssize_t found = map_find(&g->singles, key, &slot);
    if (found >= 0) {
        set_steps(g->singles.items[found].steps, s1, 1, NULL);
        return 0;
    }
    return setdefault(&g->singles, key, s1, 1, NULL);
}

/* _with_point: the n descending points of `points` with t, which they lack, in its place, written
 * to `found`; returns their number (n + 1). The sources of a second step after a first step that
 * landed on a point the mover did not hold. */
static int with_point(const int *points, int n, int t, int *found) {
    int k = 0, m = 0;
    while (k < n && points[k] > t)
        found[m++] = points[k++];
    found[m++] = t;
    while (k < n)
        found[m++] = points[k++];
    return m;
}

static int occupied_points(const int *b, int *occupied, int *n) {
    int outside = 0;
    *n = 0;
    for (int p = 24; p >= 1; p--)
        if (b[p] > 0) {
            occupied[(*n)++] = p;
            if (p > 6)
                outside += b[p];
        }
    return outside;
}

/* Both orders of the dice; a pair of steps already played in the first order is not replayed.
 * Returns the dice used, FALLBACK or NO_MEMORY. */
static int fast_two(Gen *g, int d1, int d2, int limit) {
    int *b = g->b;
    const int all = g->checkers, closed_at = g->closed_at, blot = g->blot, exact = g->exact;
    const int larger = d1 > d2 ? d1 : d2;
    int occupied[24], n_occupied, bar_only[1] = {BAR};
    int outside = occupied_points(b, occupied, &n_occupied) + b[BAR];
    uint8_t pairs[26][26]; /* [x source][y source]: pairs of steps played in the first order */
    memset(pairs, 0, sizeof pairs);
    int have_singles = 0; /* one-die candidates, kept only while no play uses both dice */
    map_clear(&g->plays);
    const int *first_sources = b[BAR] ? bar_only : occupied;
    const int n_first = b[BAR] ? 1 : n_occupied;
    int8_t key[KEY];
    for (int order = 0; order < 2; order++) {
        const int x = order ? d2 : d1, y = order ? d1 : d2;
        for (int i = 0; i < n_first; i++) {
            const int p = first_sources[i], t = p - x;
            if (t >= 1) {
                if (b[t] <= closed_at) /* §2.2 item 2: the point is closed */
                    continue;
            } else if (outside || (t < 0 && (exact || checker_above(b, p))))
                continue; /* §2.2 bear-off: "only if the mover is all home"; standard or exact rule */
            const int v = hit_step(b, p, t, blot);
            int s1[3] = {p, t >= 1 ? t : 0, v == blot};
            const int out1 = p > 6 && t <= 6 ? outside - 1 : outside;
            if (b[0] == all) {
                /* §2.3 item 2: bearing off the last checker "counts as having used all dice". */
                if (setdefault_board(&g->plays, b, &s1, 1, NULL) < 0)
                    return NO_MEMORY;
            } else {
                /* The second step, sources descending (the first step may add its landing point). */
                int merged[25], n_sources;
                const int *sources;
                if (b[BAR]) {
                    sources = bar_only;
                    n_sources = 1;
                } else if (t >= 1 && v <= 0) {
                    n_sources = with_point(occupied, n_occupied, t, merged);
                    sources = merged;
                } else {
                    sources = occupied;
                    n_sources = n_occupied;
                }
                /* §3.3.3: at most `limit` head steps in the segment. */
                const int head_left = p == HEAD ? limit - 1 : limit;
                int more = 0;
                for (int j = 0; j < n_sources; j++) {
                    const int q = sources[j], u = q - y;
                    if (b[q] <= 0 || (q == HEAD && head_left <= 0))
                        continue;
                    int s2[3] = {q, u >= 1 ? u : 0, 0};
                    if (u >= 1) {
                        const int w = b[u];
                        if (w <= closed_at)
                            continue;
                        more = 1;
                        if (!order)
                            pairs[p][q] = 1;
                        else if (pairs[q][p])
                            continue; /* the same two steps in the other order: the same result */
                        b[q]--;
                        if (w == blot) {
                            b[u] = 1;
                            b[OPP_BAR]++;
                            s2[2] = 1;
                            key_of(b, key);
                            b[OPP_BAR]--;
                        } else {
                            b[u] = w + 1;
                            key_of(b, key);
                        }
                        b[u] = w;
                        b[q]++;
                    } else {
                        if (out1 || (u < 0 && (exact || checker_above(b, q))))
                            continue;
                        more = 1;
                        if (!order)
                            pairs[p][q] = 1;
                        else if (pairs[q][p])
                            continue;
                        b[q]--;
                        b[0]++;
                        key_of(b, key);
                        b[q]++;
                        b[0]--;
                    }
                    if (setdefault(&g->plays, key, &s1, 1, s2) < 0)
                        return NO_MEMORY;
                }
                if (!more && !g->plays.n &&
                    add_single(g, &have_singles, b, x == larger, &s1) < 0)
                    return NO_MEMORY;
            }
            hit_unstep(b, p, t, v, blot); /* undo the first step */
        }
    }
    if (g->plays.n) {
        if (g->end_blocks && !filter_blocks(&g->plays, g))
            return FALLBACK; /* every two-dice play fails the end check: candidates are shorter */
        g->result = &g->plays;
        return 2;
    }
    if (have_singles && g->singles.n) {
        Py_ssize_t kept = g->singles.n;
        if (g->end_blocks)
            kept = filter_blocks(&g->singles, g);
        if (kept) {
            /* §2.3 item 5, the larger-die rule: "if N = 1, D consists of two different values and
             * a remaining candidate uses the larger value, only candidates using the larger value
             * remain". */
            if (g->larger.n) {
                Py_ssize_t with_larger = 0;
                size_t slot;
                for (Py_ssize_t j = 0; j < g->singles.n; j++) {
                    Entry *e = &g->singles.items[j];
                    if (e->alive && map_find(&g->larger, e->board, &slot) >= 0)
                        with_larger++;
                }
                if (with_larger)
                    for (Py_ssize_t j = 0; j < g->singles.n; j++) {
                        Entry *e = &g->singles.items[j];
                        if (e->alive && map_find(&g->larger, e->board, &slot) < 0)
                            e->alive = 0;
                    }
            }
            g->result = &g->singles;
            return 1;
        }
    }
    return no_play(g) < 0 ? NO_MEMORY : 0;
}

/* -- equal dice (MoveGenerator._fast_equal, _MultisetSearch) ---------------------------------- */

/* The state every equal-dice search starts from (_EqualDice): `total` steps of `die`, no play. */
static void start_equal(Gen *g, int die, int total) {
    g->die = die;
    g->total = total;
    g->last = total - 1;
    g->best = -1;
    map_clear(&g->plays);
}

/* Keeps the board (or a step from it) as a play of `used` dice, if no play so far uses more. */
static int record(Gen *g, int used, const int8_t *key, int depth, const int *step) {
    if (g->best < used) {
        g->best = used;
        map_clear(&g->plays);
    }
    return setdefault(&g->plays, key, g->path, depth, step);
}

/* Steps from non-increasing source points (one order per multiset of steps: §2.3's sequences of
 * an order-free rule set reach the same results in any order). -1 when out of memory. */
static int search(Gen *g, int start, int depth, int outside, int head_left) {
    int *b = g->b;
    const int die = g->die, blot = g->blot, exact = g->exact;
    const int stop = b[BAR] ? 1 : outside ? g->board_end : g->count;
    int moved = 0;
    int8_t key[KEY];
    for (int j = start; j < stop; j++) {
        const int p = g->movable[j];
        if (b[p] <= 0 || (p == HEAD && head_left <= 0))
            continue;
        const int t = p - die;
        if (t < 0 && (exact || checker_above(b, p)))
            continue;
        moved = 1;
        const int v = hit_step(b, p, t, blot);
        int step[3] = {p, t >= 1 ? t : 0, v == blot};
        if (depth == g->last || b[0] == g->checkers) {
            /* The last die, or §2.3 item 2: the last checker off "counts as having used all
             * dice". */
            key_of(b, key);
            if (record(g, g->total, key, depth, step) < 0)
                return -1;
        } else {
            memcpy(g->path[depth], step, sizeof step);
            if (search(g, j, depth + 1, p > 6 && t <= 6 ? outside - 1 : outside,
                       p == HEAD ? head_left - 1 : head_left) < 0)
                return -1;
        }
        hit_unstep(b, p, t, v, blot);
    }
    if (!moved && depth >= g->best) {
        /* A leaf short of the segment's dice (§2.3 item 4: only the longest are plays). */
        key_of(b, key);
        if (record(g, depth, key, depth, NULL) < 0)
            return -1;
    }
    return 0;
}

static int fast_equal(Gen *g, int die, int total, int limit) {
    int *b = g->b;
    /* Points a checker can step from by `die`: held now or reachable by earlier steps, with an open
     * landing point or a bear-off. Whether a point is closed cannot change in the segment (the
     * mover's steps only add his checkers; a hit blot's point stays open). Descending: the bar
     * first, the bear-off points (p <= die) last, from board_end on. */
    int reached[26] = {0}, n = 0, outside = b[BAR];
    if (outside) {
        if (b[BAR - die] <= g->closed_at)
            return no_play(g) < 0 ? NO_MEMORY : 0; /* closed out */
        g->movable[n++] = BAR;
        reached[BAR - die] = 1;
    }
    for (int p = 24; p > die; p--) {
        const int c = b[p];
        if (c > 0 || reached[p]) {
            if (c > 0 && p > 6)
                outside += c;
            if (b[p - die] > g->closed_at) {
                g->movable[n++] = p;
                reached[p - die] = 1;
            }
        }
    }
    g->board_end = n;
    for (int p = die; p >= 1; p--)
        if (b[p] > 0 || reached[p])
            g->movable[n++] = p;
    g->count = n;
    start_equal(g, die, total);
    if (search(g, 0, 0, outside, limit) < 0)
        return NO_MEMORY;
    if (g->end_blocks && g->best && !filter_blocks(&g->plays, g))
        return FALLBACK;
    g->result = &g->plays;
    return g->best;
}

/* -- the ordered search's shortcut (MoveGenerator._ordered, _order_free_now) ------------------ */

enum { HOME_ALWAYS, HOME_NEVER, HOME_UNTIL_ALL_HOME };
enum { QUARTER_NONE, QUARTER_STEP, QUARTER_END };

/* The mover's checkers on points 7...24 (outside his home; the bar not counted). */
static int outside_home(const int *b) {
    int n = 0;
    for (int p = 7; p <= 24; p++)
        if (b[p] > 0)
            n += b[p];
    return n;
}

/* MoveGenerator._order_free_now: whether no order-dependent rule can bind in a segment of `total`
 * steps from the start board, so that the fast path's loops give the ordered search's answer. */
static int order_free_now(const Gen *g, int total) {
    const int *b = g->start;
    /* A per-step quarter check, or home moves that are "always illegal", bind at any step. */
    if (g->quarter == QUARTER_STEP || g->home_moves == HOME_NEVER)
        return 0;
    /* "until_all_home: such a step is illegal if the mover is all home immediately before it"
     * (§3.5): never, when more checkers are outside home than the segment has steps (a step
     * brings at most one checker home). */
    if (g->home_moves == HOME_UNTIL_ALL_HOME && outside_home(b) <= total)
        return 0;
    /* §3.9 runner rule: "A player has passed iff he has a checker on one of his points 1...11 or
     * has borne off a checker" (and stays passed); before that the rule binds. */
    if (g->runner && !b[0]) {
        int passed = 0;
        for (int p = 1; p <= 11; p++)
            passed |= b[p] > 0;
        if (!passed)
            return 0;
    }
    /* The per-step six-block check (§3.4) binds only where a block can be illegal: six of my
     * points below O's lowest checker (block_count > 0, which O's checkers cannot change). */
    return !(g->block_step && g->block_count);
}

/* Fevga's quarter (§3.9): "the mover must not hold all six of his points 19...24". Whether
 * `steps` steps can make him hold them all (each step newly holds at most one point). */
static int quarter_may_close(const int *b, int steps) {
    int held = 0;
    for (int p = 19; p <= 24; p++)
        held += b[p] > 0;
    return held + steps >= 6;
}

/* The quarter end check (§2.3 item 3): drops the results holding all of 19...24; how many
 * remain. */
static Py_ssize_t filter_quarter(Map *m) {
    Py_ssize_t kept = 0;
    for (Py_ssize_t j = 0; j < m->n; j++) {
        Entry *e = &m->items[j];
        if (e->alive) {
            int open = 0;
            for (int p = 19; p <= 24; p++)
                open |= e->board[p] <= 0;
            e->alive = open;
        }
        kept += e->alive;
    }
    return kept;
}

/* §3.9 trap rule: "a position contains a trap iff O has >= 1 checker on the board, all of O's
 * on-board checkers stand on one point s (O's coordinates), and M has a block {k ... e} with
 * e = s - 1". The start board's s (O's checkers never move without hitting), or 0. */
static int trap_point(const int *b) {
    int found = 0;
    for (int q = 1; q <= 24; q++)
        if (b[q <= 12 ? q + 12 : q - 12] < 0) {
            if (found)
                return 0;
            found = q;
        }
    return found;
}

static int is_trap(const int8_t *key, int s) {
    for (int q = s - 6; q < s; q++)
        if (key[q <= 12 ? q + 12 : q - 12] <= 0)
            return 0;
    return 1;
}

/* §2.3 item 6: "if a remaining candidate ends in a position without a trap, candidates ending in
 * a trap are discarded". */
static void filter_traps(Map *m, int s) {
    int free = 0;
    for (Py_ssize_t j = 0; j < m->n; j++)
        free |= m->items[j].alive && !is_trap(m->items[j].board, s);
    if (free)
        for (Py_ssize_t j = 0; j < m->n; j++)
            if (m->items[j].alive && is_trap(m->items[j].board, s))
                m->items[j].alive = 0;
}

/* -- the ordered search's two different dice (MoveGenerator._ordered_two) --------------------- */

#define ON_O_PATH(q) ((q) <= 12 ? (q) + 12 : (q) - 12) /* O's point q in my coordinates */

/* has_run_of_six on a board being searched. */
static int run_of_six(const int *b, const Gen *g) {
    int run = 0;
    for (int i = 0; i < g->block_count; i++) {
        if (b[g->block_points[i]] > 0) {
            if (++run == 6)
                return 1;
        } else
            run = 0;
    }
    return 0;
}

/* _block_through: whether my newly held point t is part of six consecutive points of mine on O's
 * path below O's lowest checker `lowest` (§3.3.5: "a block of six consecutive points is illegal
 * if no opposing checker is ahead of it"). */
static int block_through(const int *b, int t, int lowest) {
    const int q = t <= 12 ? t + 12 : t - 12; /* t on O's path */
    if (q >= lowest)
        return 0;
    int run = 1;
    for (int r = q - 1; r >= 1 && b[ON_O_PATH(r)] > 0; r--)
        run++;
    for (int r = q + 1; r < lowest && b[ON_O_PATH(r)] > 0; r++)
        run++;
    return run >= 6;
}

/* How _ordered_two writes a result into plays, where a one-die result's place may be held by a
 * placeholder (None in Python; an entry not alive here, keeping its place as a dict does). */
enum {
    PUT_PLAY,        /* plays[key] = steps, unless key holds a play already */
    PUT_PLACEHOLDER, /* plays[key] = None, unless key is there */
    PUT_OVER_PLACEHOLDER /* plays[key] = steps only where key holds a placeholder */
};

static int put_play(Map *m, const int *b, int (*path)[3], int depth, const int *step, int how) {
    int8_t key[KEY];
    size_t slot;
    key_of(b, key);
    Py_ssize_t found = map_find(m, key, &slot);
    if (found >= 0) {
        Entry *e = &m->items[found];
        if (!e->alive && how != PUT_PLACEHOLDER) {
            set_steps(e->steps, path, depth, step);
            e->alive = 1;
        }
        return 0;
    }
    if (how == PUT_OVER_PLACEHOLDER)
        return 0;
    Entry *e = map_insert(m, key, slot);
    if (!e)
        return -1;
    set_steps(e->steps, path, depth, step);
    e->alive = how == PUT_PLAY;
    return 0;
}

/* Two different dice, both orders, with the per-step rules inline (§2.2 item 3); the plays using
 * both dice (or bearing off the last checker): 2, or FALLBACK when there is none (the general
 * search settles the one-die plays and the larger-die rule), or NO_MEMORY. A line-by-line
 * translation of MoveGenerator._ordered_two; entries not alive are its None placeholders. */
static int ordered_two(Gen *g, int d1, int d2, int limit) {
    int *b = g->b;
    const int all = g->checkers, closed_at = g->closed_at, exact = g->exact;
    const int home_never = g->home_moves == HOME_NEVER;
    const int home_until = g->home_moves == HOME_UNTIL_ALL_HOME;
    /* _block_setup: O's lowest point, and whether the start already has an illegal block. */
    const int lowest = g->block_count ? g->block_count + 1 : 0;
    const int block_step = g->block_step && g->block_count;
    const int block_end = g->block_end && g->block_count;
    const int block_full = (block_step || block_end) && run_of_six(b, g);
    const int quarter_step = g->quarter == QUARTER_STEP, quarter_end = g->quarter == QUARTER_END;
    /* The mover's points among 19...24 (the quarter is closed when all six are held, §3.9). */
    int held = 0;
    for (int p = 19; p <= 24; p++)
        held += b[p] > 0;
    int occupied[24], n_occupied;
    const int outside = occupied_points(b, occupied, &n_occupied);
    if (!n_occupied)
        return FALLBACK;
    /* §3.9 runner rule: "A player has passed iff he has a checker on one of his points 1...11 or
     * has borne off a checker"; until then the head moves only while it holds every checker. */
    const int passed = !g->runner || b[0] > 0 || occupied[n_occupied - 1] <= 11;
    /* §3.5 moves inside home: "never", or "illegal if the mover is all home immediately
     * before". */
    const int home_blocked = home_never || (home_until && !outside);
    uint8_t pairs[26][26]; /* [x source][y source]: the legal pairs of steps of the first order */
    memset(pairs, 0, sizeof pairs);
    map_clear(&g->plays);
    Map *plays = &g->plays;
    for (int first = 1; first >= 0; first--) {
        const int x = first ? d1 : d2, y = first ? d2 : d1;
        for (int i = 0; i < n_occupied; i++) {
            const int p = occupied[i], at_head = p == HEAD;
            /* §3.3.3 head limit; the runner rule. */
            if (at_head && (limit <= 0 || (!passed && b[HEAD] != all)))
                continue;
            const int t = p - x;
            int v, held1, out1;
            if (t >= 1) {
                v = b[t];
                if (v <= closed_at || (p <= 6 && home_blocked))
                    continue;
                b[p]--;
                b[t] = v + 1;
                held1 = held;
                if (p >= 19 && !b[p])
                    held1--;
                if (t >= 19 && !v)
                    held1++;
                /* The per-step checks: the six-block (§3.4), the quarter (every_step, §3.9). */
                if ((block_step &&
                     (block_full ? run_of_six(b, g) : !v && block_through(b, t, lowest))) ||
                    (quarter_step && held1 == 6)) {
                    b[p]++;
                    b[t] = v;
                    continue;
                }
                out1 = p > 6 && t <= 6 ? outside - 1 : outside;
            } else {
                /* §2.2 bear-off: "only if the mover is all home"; standard or exact rule. */
                if (outside || (t < 0 && (exact || checker_above(b, p))))
                    continue;
                v = 0;
                b[p]--;
                b[0]++;
                held1 = held;
                if ((block_full && run_of_six(b, g)) || (quarter_step && held1 == 6)) {
                    b[p]++;
                    b[0]--;
                    continue;
                }
                out1 = 0;
            }
            int s1[3] = {p, t >= 1 ? t : 0, 0};
            if (b[0] == all) {
                /* §2.3 item 2: bearing off the last checker "counts as having used all dice". */
                if (put_play(plays, b, &s1, 1, NULL, PUT_PLAY) < 0)
                    return NO_MEMORY;
            } else {
                if (first && t < 1) {
                    /* Keep this one-die result's place (a placeholder, not a play). */
                    if (!((block_end && block_full && run_of_six(b, g)) ||
                          (quarter_end && held1 == 6)) &&
                        put_play(plays, b, &s1, 1, NULL, PUT_PLACEHOLDER) < 0)
                        return NO_MEMORY;
                }
                const int passed1 = passed || t <= 11;
                const int blocked1 = home_never || (home_until && !out1);
                const int head_left = at_head ? limit - 1 : limit;
                int merged[25], n_sources = 0;
                const int *sources = occupied;
                if (t >= 1 && !v) { /* the first step made t a source */
                    n_sources = with_point(occupied, n_occupied, t, merged);
                    sources = merged;
                } else
                    n_sources = n_occupied;
                for (int j = 0; j < n_sources; j++) {
                    const int q = sources[j], c = b[q];
                    /* (The same two steps legal in the first order: the same result.) */
                    if (c <= 0 || (!first && pairs[q][p]))
                        continue;
                    if (q == HEAD && (head_left <= 0 || (!passed1 && c != all)))
                        continue;
                    const int u = q - y;
                    int s2[3] = {q, u >= 1 ? u : 0, 0};
                    if (u >= 1) {
                        const int w = b[u];
                        if (w <= closed_at || (q <= 6 && blocked1))
                            continue;
                        b[q] = c - 1;
                        b[u] = w + 1;
                        int held2 = held1;
                        if (q >= 19 && c == 1)
                            held2--;
                        if (u >= 19 && !w)
                            held2++;
                        if (!((block_step && (block_full ? run_of_six(b, g)
                                                         : !w && block_through(b, u, lowest))) ||
                              (quarter_step && held2 == 6))) {
                            if (first)
                                pairs[p][q] = 1;
                            /* The end-of-segment checks (§2.3 item 3) for a new result: a block
                             * the start did not have runs through a newly held point. */
                            const int fails =
                                (block_end &&
                                 (block_full ? run_of_six(b, g)
                                             : (!w && block_through(b, u, lowest)) ||
                                                   (t >= 1 && !v && b[t] > 0 &&
                                                    block_through(b, t, lowest)))) ||
                                (quarter_end && held2 == 6);
                            const int how = fails ? PUT_OVER_PLACEHOLDER : PUT_PLAY;
                            if (put_play(plays, b, &s1, 1, s2, how) < 0)
                                return NO_MEMORY;
                        }
                        b[q] = c;
                        b[u] = w;
                    } else {
                        if (out1 || (u < 0 && (exact || checker_above(b, q))))
                            continue;
                        b[q] = c - 1;
                        b[0]++;
                        if (!((block_full && run_of_six(b, g)) || (quarter_step && held1 == 6))) {
                            if (first)
                                pairs[p][q] = 1;
                            const int fails =
                                b[0] != all &&
                                ((block_end && (block_full ? run_of_six(b, g)
                                                           : t >= 1 && !v && b[t] > 0 &&
                                                                 block_through(b, t, lowest))) ||
                                 (quarter_end && held1 == 6));
                            const int how = fails ? PUT_OVER_PLACEHOLDER : PUT_PLAY;
                            if (put_play(plays, b, &s1, 1, s2, how) < 0)
                                return NO_MEMORY;
                        }
                        b[q] = c;
                        b[0]--;
                    }
                }
            }
            /* Undo the first step. */
            b[p]++;
            if (t >= 1)
                b[t] = v;
            else
                b[0]--;
        }
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t j = 0; j < plays->n; j++)
        kept += plays->items[j].alive;
    if (!kept)
        return FALLBACK;
    g->result = plays;
    return 2;
}


/* -- the ordered search's equal dice (MoveGenerator._ordered_equal, _OrderedSearch) ----------- */

/* The searched board is a state's key: the opponent's checkers never move (no hitting) and the
 * mover's bar is never entered here, so the board is one to one with Python's integer key of the
 * mover's checker counts. g->singles holds the states seen (recorded or failing an end check),
 * g->larger those expanded. */
typedef struct {
    int lowest, block_step, block_end, block_full, quarter_step, quarter_end, home_never,
        home_until;
} OrderedRules;

static int in_set(const Map *m, const int *b) {
    int8_t key[KEY];
    size_t slot;
    key_of(b, key);
    return map_find(m, key, &slot) >= 0;
}

static int add_to_set(Map *m, const int *b) {
    return setdefault_board(m, b, NULL, 0, NULL);
}

/* Whether the board fails an end-of-segment check (§2.3 item 3: the six-block, Fevga's
 * quarter). */
static int end_fails(const Gen *g, const OrderedRules *r, int held) {
    return (r->block_end && run_of_six(g->b, g)) || (r->quarter_end && held == 6);
}

/* A state not seen before: marks it seen and keeps it as a play of `used` dice (`step` after the
 * path's `depth` steps) unless it fails the end checks (`check`). -1 when out of memory. */
static int record_state(Gen *g, const OrderedRules *r, int used, int depth, const int *step,
                        int check, int held) {
    if (in_set(&g->singles, g->b))
        return 0;
    if (add_to_set(&g->singles, g->b) < 0)
        return -1;
    if (check && end_fails(g, r, held))
        return 0;
    int8_t key[KEY];
    key_of(g->b, key);
    return record(g, used, key, depth, step);
}

/* _OrderedSearch.search: every order of the steps, depth first, the per-step rules inline. */
static int ordered_search(Gen *g, const OrderedRules *r, int depth, int outside, int held,
                          int passed, int head_left) {
    int *b = g->b;
    const int die = g->die, all = g->checkers;
    /* This position is a candidate; only the ones with the most dice so far are kept. */
    if (depth >= g->best && record_state(g, r, depth, depth, NULL, 1, held) < 0)
        return -1;
    /* Expanded once: a second arrival at a state would change nothing. */
    if (add_to_set(&g->larger, b) < 0)
        return -1;
    const int home_blocked = r->home_never || (r->home_until && !outside);
    for (int j = 0; j < g->count; j++) {
        const int p = g->movable[j], c = b[p];
        if (c <= 0)
            continue;
        /* §3.3.3 head limit; §3.9 runner rule (the head moves only while it holds every
         * checker). */
        if (p == HEAD && (head_left <= 0 || (!passed && c != all)))
            continue;
        const int t = p - die;
        int step[3] = {p, t >= 1 ? t : 0, 0};
        if (t >= 1) {
            if (p <= 6 && home_blocked)
                continue;
            const int v = b[t];
            b[p] = c - 1;
            b[t] = v + 1;
            int held1 = held;
            if (p >= 19 && c == 1)
                held1--;
            if (t >= 19 && !v)
                held1++;
            if (!((r->block_step &&
                   (r->block_full ? run_of_six(b, g) : !v && block_through(b, t, r->lowest))) ||
                  (r->quarter_step && held1 == 6))) {
                if (depth == g->last) {
                    if (record_state(g, r, g->total, depth, step, 1, held1) < 0)
                        return -1;
                } else if (!in_set(&g->larger, b)) {
                    memcpy(g->path[depth], step, sizeof step);
                    if (ordered_search(g, r, depth + 1, p > 6 && t <= 6 ? outside - 1 : outside,
                                       held1, passed || t <= 11,
                                       p == HEAD ? head_left - 1 : head_left) < 0)
                        return -1;
                }
            }
            b[p] = c;
            b[t] = v;
        } else {
            /* §2.2 bear-off: "only if the mover is all home"; standard or exact rule. */
            if (outside || (t < 0 && (g->exact || checker_above(b, p))))
                continue;
            b[p] = c - 1;
            b[0]++;
            if (!((r->block_full && run_of_six(b, g)) || (r->quarter_step && held == 6))) {
                if (b[0] == all || depth == g->last) {
                    /* §2.3 item 2: bearing off the last checker "counts as having used all
                     * dice" (and passes every end check). */
                    if (record_state(g, r, g->total, depth, step, b[0] != all, held) < 0)
                        return -1;
                } else if (!in_set(&g->larger, b)) {
                    memcpy(g->path[depth], step, sizeof step);
                    if (ordered_search(g, r, depth + 1, 0, held, 1, head_left) < 0)
                        return -1;
                }
            }
            b[p] = c;
            b[0]--;
        }
    }
    return 0;
}

/* MoveGenerator._ordered_equal: the dice used (the plays in g->plays), or NO_MEMORY. */
static int ordered_equal(Gen *g, int die, int total, int limit) {
    int *b = g->b;
    OrderedRules r;
    r.lowest = g->block_count ? g->block_count + 1 : 0; /* _block_setup */
    r.block_step = g->block_step && g->block_count;
    r.block_end = g->block_end && g->block_count;
    r.block_full = (r.block_step || r.block_end) && run_of_six(b, g);
    r.quarter_step = g->quarter == QUARTER_STEP;
    r.quarter_end = g->quarter == QUARTER_END;
    r.home_never = g->home_moves == HOME_NEVER;
    r.home_until = g->home_moves == HOME_UNTIL_ALL_HOME;
    int held = 0;
    for (int p = 19; p <= 24; p++)
        held += b[p] > 0;
    /* Points that can ever step by `die` (held now or reachable; an open landing point or a
     * bear-off), descending. A point's closedness cannot change (no hitting). */
    int reached[26] = {0}, n = 0, outside = 0, low = 25;
    for (int p = 24; p >= 1; p--) {
        const int c = b[p];
        if (c > 0) {
            low = p;
            if (p > 6)
                outside += c;
        }
        if (c > 0 || reached[p]) {
            const int t = p - die;
            if (t < 1)
                g->movable[n++] = p;
            else if (b[t] > g->closed_at) {
                g->movable[n++] = p;
                reached[t] = 1;
            }
        }
    }
    g->count = n;
    start_equal(g, die, total);
    map_clear(&g->singles);
    map_clear(&g->larger);
    const int passed = !g->runner || b[0] > 0 || low <= 11;
    if (ordered_search(g, &r, 0, outside, held, passed, limit) < 0)
        return NO_MEMORY;
    if (!g->plays.n) /* only from a start that itself fails the end checks (§2.7 excludes it) */
        return no_play(g) < 0 ? NO_MEMORY : 0;
    g->result = &g->plays;
    return g->best;
}

/* -- the general search for two different dice (MoveGenerator._search) ------------------------ */

/* Where the ordered search finds no play using both of two different dice, it hands the segment
 * to the general search (§2.3 items 4-5: the one-die plays and the larger-die rule). This is a
 * translation of MoveGenerator._search for that case only: two different dice, no hitting. Every
 * node is a candidate (unless it fails an end check); g->plays maps a result to its steps, the
 * most dice it is reached with, and whether the larger die alone reaches it; g->singles holds the
 * results after both dice that fail an end check. */
typedef struct {
    int larger, limit, lowest, block_step, block_end, block_full, quarter_step, quarter_end,
        quarter_full, home_never, home_until;
} GeneralRules;

/* "the mover holds all of his points 19...24" (Fevga's quarter, §3.9). */
static int quarter_closed(const int *b) {
    for (int p = 19; p <= 24; p++)
        if (b[p] <= 0)
            return 0;
    return 1;
}

static int general_end_fails(const Gen *g, const GeneralRules *r) {
    return (r->block_end && run_of_six(g->b, g)) || (r->quarter_end && quarter_closed(g->b));
}

/* record(key, used): a new result, or more dice (or, among one-die plays, the larger die) for a
 * result found before. */
static int general_record(Gen *g, int used, int by_larger, int depth) {
    int8_t key[KEY];
    size_t slot;
    key_of(g->b, key);
    Py_ssize_t found = map_find(&g->plays, key, &slot);
    if (found < 0) {
        Entry *e = map_insert(&g->plays, key, slot);
        if (!e)
            return -1;
        set_steps(e->steps, g->path, depth, NULL);
        e->used = (int8_t)used;
        e->larger = (int8_t)by_larger;
        return 0;
    }
    Entry *e = &g->plays.items[found];
    if (used > e->used || (by_larger && used == e->used && !e->larger)) {
        e->used = (int8_t)used;
        set_steps(e->steps, g->path, depth, NULL);
    }
    if (by_larger)
        e->larger = 1;
    return 0;
}

/* node(): records this position, then steps on with each remaining die (`first_die` is the die
 * of the path's first step). */
static int general_node(Gen *g, const GeneralRules *r, const int *remaining, int n_remaining,
                        int head_used, int outside, const int *occupied, int n_occupied,
                        int depth, int first_die) {
    int *b = g->b;
    const int all = g->checkers, total = 2;
    if (!general_end_fails(g, r) &&
        general_record(g, depth, depth == 1 && first_die == r->larger, depth) < 0)
        return -1;
    /* Which points may move at all (descending). */
    int sources[25], n_sources = 0;
    if (b[BAR])
        sources[n_sources++] = BAR; /* §2.2 item 1: "p MUST be 25" */
    else {
        int passed = 0;
        for (int p = 1; p <= 11; p++)
            passed |= b[p] > 0;
        const int runner_only = g->runner && !b[0] && !passed;
        /* Fevga runner rule (§3.9): before passing, only the head checker (all on the head) or
         * the one runner may move. */
        const int on_head = b[HEAD] == all;
        for (int i = 0; i < n_occupied; i++)
            if (!runner_only || (occupied[i] == HEAD) == on_head)
                sources[n_sources++] = occupied[i];
    }
    const int home_blocked = r->home_never || (r->home_until && !outside);
    for (int i = 0; i < n_remaining; i++) {
        const int die = remaining[i];
        const int rest = n_remaining > 1 ? remaining[1 - i] : 0; /* the other die, if any */
        for (int k = 0; k < n_sources; k++) {
            const int p = sources[k], at_head = p == HEAD;
            if (at_head && head_used >= r->limit)
                continue;
            const int t = p - die;
            int v, ok, entered;
            if (t >= 1) {
                v = b[t];
                if (v <= g->closed_at || (p <= 6 && home_blocked))
                    continue;
                b[p]--;
                b[t] = v + 1;
                /* Per-step checks (§2.2 item 3). */
                ok = !(r->block_step &&
                       (r->block_full ? run_of_six(b, g)
                                      : v == 0 && block_through(b, t, r->lowest))) &&
                     !(r->quarter_step && (r->quarter_full || (v == 0 && t >= 19)) &&
                       quarter_closed(b));
                entered = p > 6 && t <= 6;
            } else {
                if (outside)
                    continue; /* bear-off only while all home (§2.5) */
                if (t < 0 && (g->exact || checker_above(b, p)))
                    continue;
                v = 0;
                b[p]--;
                b[0]++;
                /* A bear-off adds no point: it makes no block and closes no quarter. */
                ok = !((r->block_full && run_of_six(b, g)) ||
                       (r->quarter_full && quarter_closed(b)));
                entered = 0;
            }
            if (ok) {
                g->path[depth][0] = p, g->path[depth][1] = t >= 1 ? t : 0, g->path[depth][2] = 0;
                if (b[0] == all) {
                    /* §2.3 item 2: bearing off the last checker "counts as having used all
                     * dice". */
                    if (general_record(g, total, 0, depth + 1) < 0)
                        return -1;
                } else if (n_remaining > 1) {
                    /* The mover's occupied points after the step, still descending. */
                    int child[25], n_child = 0;
                    for (int j = 0; j < n_occupied; j++) {
                        const int q = occupied[j];
                        if (q == p && b[p] == 0 && p != BAR)
                            continue;
                        if (t >= 1 && v <= 0 && t > q && (n_child == 0 || child[n_child - 1] > t))
                            child[n_child++] = t;
                        child[n_child++] = q;
                    }
                    if (t >= 1 && v <= 0 && (n_child == 0 || child[n_child - 1] > t))
                        child[n_child++] = t;
                    if (general_node(g, r, &rest, 1, head_used + at_head, outside - entered, child,
                                     n_child, depth + 1, depth ? first_die : die) < 0)
                        return -1;
                } else {
                    /* After the last die: a candidate unless it fails an end check. */
                    int8_t key[KEY];
                    size_t slot;
                    key_of(b, key);
                    Py_ssize_t found = map_find(&g->plays, key, &slot);
                    if (found < 0) {
                        if (map_find(&g->singles, key, &slot) < 0) {
                            if (general_end_fails(g, r)) {
                                if (setdefault(&g->singles, key, NULL, 0, NULL) < 0)
                                    return -1;
                            } else if (general_record(g, total, 0, depth + 1) < 0)
                                return -1;
                        }
                    } else if (g->plays.items[found].used < total) {
                        g->plays.items[found].used = (int8_t)total;
                        set_steps(g->plays.items[found].steps, g->path, depth + 1, NULL);
                    }
                }
            }
            b[p]++;
            if (t >= 1)
                b[t] = v;
            else
                b[0]--;
        }
    }
    return 0;
}

/* MoveGenerator._search for two different dice without hitting: the dice used (§2.3 item 4, the
 * maximum-dice rule; item 5, the larger-die rule), the plays in g->plays; or NO_MEMORY. */
static int general_two(Gen *g, int d1, int d2, int limit) {
    int *b = g->b;
    GeneralRules r;
    r.larger = d1 > d2 ? d1 : d2;
    r.limit = limit;
    r.lowest = g->block_count ? g->block_count + 1 : 0;
    r.block_step = g->block_step && g->block_count;
    r.block_end = g->block_end && g->block_count;
    r.block_full = r.block_step && run_of_six(b, g);
    r.quarter_step = g->quarter == QUARTER_STEP;
    r.quarter_end = g->quarter == QUARTER_END;
    r.quarter_full = r.quarter_step && quarter_closed(b);
    r.home_never = g->home_moves == HOME_NEVER;
    r.home_until = g->home_moves == HOME_UNTIL_ALL_HOME;
    int occupied[24], n_occupied = 0;
    for (int p = 24; p >= 1; p--)
        if (b[p] > 0)
            occupied[n_occupied++] = p;
    const int outside = b[BAR] + outside_home(b);
    map_clear(&g->plays);
    map_clear(&g->singles);
    const int dice[2] = {d1, d2};
    if (general_node(g, &r, dice, 2, 0, outside, occupied, n_occupied, 0, 0) < 0)
        return NO_MEMORY;
    if (!g->plays.n) /* only from a start that itself fails the end checks (§2.7 excludes it) */
        return no_play(g) < 0 ? NO_MEMORY : 0;
    int used = 0, with_larger = 0;
    for (Py_ssize_t j = 0; j < g->plays.n; j++)
        if (g->plays.items[j].used > used)
            used = g->plays.items[j].used;
    for (Py_ssize_t j = 0; j < g->plays.n; j++) {
        Entry *e = &g->plays.items[j];
        e->alive = e->used == used;
        with_larger |= e->alive && e->larger;
    }
    /* §2.3 item 5: "if N = 1, D consists of two different values and a remaining candidate uses
     * the larger value, only candidates using the larger value remain". */
    if (used == 1 && with_larger)
        for (Py_ssize_t j = 0; j < g->plays.n; j++)
            g->plays.items[j].alive &= g->plays.items[j].larger;
    g->result = &g->plays;
    return used;
}

#define DECLINED (-3) /* a shortcut does not answer: the ordered search's own loops do */

/* MoveGenerator._ordered_fast_two: two different dice by the fast path's loops where no
 * order-dependent rule can bind and no bear-off is possible (with one, the fast path's order of
 * results differs from the ordered search's: core/movegen.py's module doc). */
static int ordered_fast_two(Gen *g, int d1, int d2, int limit) {
    if (outside_home(g->start) < 2 || !order_free_now(g, 2))
        return DECLINED;
    const int used = fast_two(g, d1, d2, limit);
    if (used == FALLBACK)
        return DECLINED;
    if (used >= 0 && g->quarter == QUARTER_END && quarter_may_close(g->start, 2)) {
        /* A one-die answer might change when the end check drops every two-dice play. */
        if (used < 2 || !filter_quarter(g->result))
            return DECLINED;
    }
    return used;
}

/* MoveGenerator._ordered_fast_equal: equal dice by the fast path's multiset search where no
 * order-dependent rule can bind, the quarter end check applied as the six-block end check. */
static int ordered_fast_equal(Gen *g, int die, int total, int limit) {
    if (!order_free_now(g, total))
        return DECLINED;
    const int used = fast_equal(g, die, total, limit);
    if (used == FALLBACK)
        return DECLINED;
    if (used > 0 && g->quarter == QUARTER_END && quarter_may_close(g->start, total) &&
        !filter_quarter(g->result))
        return DECLINED;
    return used;
}

/* MoveGenerator._ordered: the dice used (the answer in g->result), FALLBACK where the Python
 * searches answer, or NO_MEMORY. */
static int ordered_generate(Gen *g, const int *dice, int n_dice, int limit) {
    int used;
    if (n_dice == 2 && dice[0] != dice[1]) {
        used = ordered_fast_two(g, dice[0], dice[1], limit);
        if (used == DECLINED) {
            memcpy(g->b, g->start, sizeof g->b);
            used = ordered_two(g, dice[0], dice[1], limit);
            if (used == FALLBACK) {
                /* No play using both dice: the general search answers. */
                memcpy(g->b, g->start, sizeof g->b);
                used = general_two(g, dice[0], dice[1], limit);
            }
        }
    } else {
        used = ordered_fast_equal(g, dice[0], n_dice, limit);
        if (used == DECLINED) {
            memcpy(g->b, g->start, sizeof g->b);
            used = ordered_equal(g, dice[0], n_dice, limit);
        }
    }
    if (used < 0)
        return used;
    if (g->trap) {
        const int s = trap_point(g->start);
        if (s >= 7)
            filter_traps(g->result, s);
    }
    return used;
}

/* -- the pinning search (MoveGenerator._pinning, RULES.md §3.12.2) ---------------------------- */

/* For pinning rule sets (plakoto): no hitting; a step onto a lone opposing checker pins it, which
 * stays beneath the stack until its last checker leaves. The board carries the pinned points' bits
 * at b[PINS] (core/movegen.py's PINS), and a result's key carries them too (KEY), so a position
 * without pins has the same key as in any rule set. A line-by-line translation of _pinning,
 * _mother_order, _pin_two and _PinSearch (which every caller reaches through
 * pinning()). */

#define BIT(mask, p) (((mask) >> (p)) & 1)

/* pin_move, in place: a lone opposing checker on t (t >= 1, an open point) is pinned; the last
 * checker leaving p frees the one pinned beneath; t < 1 bears off. Returns t's value before the
 * step (0 for a bear-off), for pin_unstep. */
static int pin_step(int *b, int p, int t) {
    const int c = b[p];
    int m = b[PINS], v = 0;
    if (c == 1 && BIT(m, p)) {
        b[p] = -1; /* the last checker of a pinning stack frees the one beneath */
        m ^= 1 << p;
    } else
        b[p] = c - 1;
    if (t >= 1) {
        v = b[t];
        if (v == -1) {
            b[t] = 1;
            m |= 1 << t;
        } else
            b[t] = v + 1;
    } else
        b[0]++;
    b[PINS] = m;
    return v;
}

/* Undoes pin_step (c: p's count before it, v: its return, mask: the bits before it). */
static void pin_unstep(int *b, int p, int t, int c, int v, int mask) {
    if (t >= 1)
        b[t] = v;
    else
        b[0]--;
    b[p] = c;
    b[PINS] = mask;
}

/* _pin_open: whether a step to t (t < 1: off) can be legal whatever the mover's other steps: t is
 * not closed (two or more opposing checkers, or one pinning his), or it is a bear-off and none of
 * his checkers is pinned. */
static int pin_open(const int *b, int t, int mask, int stuck) {
    if (t < 1)
        return !stuck;
    const int v = b[t];
    return v >= 0 || (v == -1 && !BIT(mask, t));
}

/* Whether the board after a step ends the game, which counts as using every die: his last checker
 * off (§2.3 item 2) or, where the mother rule is live, her pinned beneath his stack with (standard
 * rule) his own 24 empty (§3.12.2). */
static int pin_ends(const Gen *g, const int *b) {
    const int o = g->opp_head;
    return b[0] == g->checkers ||
           (g->live && b[o] > 0 && BIT(b[PINS], o) && (g->mother == 2 || b[HEAD] <= 0));
}

/* Variant.mother_end of the start board (legal_plays refuses a game the mother rule ended, so
 * Python answers it): a mother is pinned, and it is a win, a loss or a draw. */
static int mother_ended(const Gen *g, const int *b) {
    const int mask = b[PINS], top = g->opp_head;
    const int opponent_pinned = BIT(mask, top) && b[top] > 0;
    const int mover_pinned = BIT(mask, 24) && b[24] < 0;
    if (!opponent_pinned && !mover_pinned)
        return 0;
    if (g->mother == 2 || (opponent_pinned && mover_pinned))
        return 1;
    return (opponent_pinned && b[24] <= 0) || (mover_pinned && b[top] >= 0);
}

/* MoveGenerator._mother_order: 0 if the mother rule cannot end the game in a segment of `total`
 * steps of d1 and d2 (equal for equal dice); 1 if it can and the multiset search finds every play;
 * 2 if every order must be searched (core/movegen.py gives the reasons). */
static int mother_order(const Gen *g, const int *b, int d1, int d2, int total, int stuck) {
    if (!g->mother)
        return 0;
    const int mask = b[PINS], o = g->opp_head, v = b[o], simple = g->mother == 2;
    const int head = b[HEAD] > 0 ? b[HEAD] : 0, equal = d1 == d2;
    if (v > 0 && BIT(mask, o)) {
        if (simple)
            return 2;
        if (head > total)
            return 0;
        return equal && head == total && o == 1 ? 1 : 2;
    }
    if (v != -1 || BIT(mask, o))
        return 0;
    const int first = simple ? 0 : head; /* steps from his 24 before the game can end */
    const int left = total - first;      /* steps left for reaching her */
    if (left < 1)
        return 0;
    if (equal) {
        int found = 0;
        for (int k = 1; k <= left; k++) {
            const int p = o + k * d1;
            if (p > 24)
                break;
            if (b[p] > 0) {
                found = 1;
                break;
            }
        }
        if (!found)
            return 0;
        if (o != 1 || (first && first + 1 < total))
            return 2;
        if (stuck)
            return 1;
        int outside = 0;
        for (int p = 7; p <= 24; p++)
            if (b[p] > 0)
                outside += b[p];
        return outside + 2 > total ? 1 : 2;
    }
    const int found = (o + d1 <= 24 && b[o + d1] > 0) || (o + d2 <= 24 && b[o + d2] > 0) ||
                      (left >= 2 && o + d1 + d2 <= 24 && b[o + d1 + d2] > 0);
    return found ? 2 : 0;
}

/* _pin_two: two different dice, both orders (a pair of steps once); the one-die plays only when
 * no play uses both. The dice used, or NO_MEMORY. */
static int pin_two(Gen *g, int d1, int d2, int stuck) {
    int *b = g->b;
    const int exact = g->exact, mask = b[PINS];
    const int larger = d1 > d2 ? d1 : d2;
    int occupied[24], n_occupied;
    const int outside = occupied_points(b, occupied, &n_occupied);
    uint32_t firsts[25]; /* bit q of firsts[p]: p by x, then q by y, played in the first order */
    memset(firsts, 0, sizeof firsts);
    int have_singles = 0; /* one-die candidates, kept only while no play uses both dice */
    int8_t key[KEY];
    map_clear(&g->plays);
    for (int order = 0; order < 2; order++) {
        const int x = order ? d2 : d1, y = order ? d1 : d2;
        /* Sources of the second step, descending: whether a point is closed cannot change in the
         * segment (_pin_movable), so they are chosen once. */
        int second[24], n_second = 0;
        for (int i = 0; i < n_occupied; i++)
            if (pin_open(b, occupied[i] - y, mask, stuck))
                second[n_second++] = occupied[i];
        for (int i = 0; i < n_occupied; i++) {
            const int p = occupied[i], t = p - x;
            int v = 0;
            if (t >= 1) {
                v = b[t];
                if (v < -1 || (v == -1 && BIT(mask, t)))
                    continue; /* closed */
            } else if (stuck || outside || (t < 0 && (exact || checker_above(b, p))))
                continue;
            const int c = b[p];
            pin_step(b, p, t);
            const int m1 = b[PINS];
            const int out1 = t >= 1 && p > 6 && t <= 6 ? outside - 1 : outside;
            int s1[3] = {p, t >= 1 ? t : 0, 0};
            if (pin_ends(g, b)) {
                /* §2.3 item 2 and §3.12.2: a step that ends the game ends the segment and counts
                 * as using every die. */
                if (setdefault_board(&g->plays, b, &s1, 1, NULL) < 0)
                    return NO_MEMORY;
            } else {
                int more = 0, merged[25], n_sources = n_second;
                uint32_t bits = 0;
                const int *sources = second;
                if (t >= 1 && v <= 0 && pin_open(b, t - y, mask, stuck)) {
                    /* The first step's landing point, newly his, is a source too. */
                    n_sources = with_point(second, n_second, t, merged);
                    sources = merged;
                }
                for (int j = 0; j < n_sources; j++) {
                    const int q = sources[j], cq = b[q];
                    if (cq <= 0)
                        continue; /* (p, emptied by the first step) */
                    const int u = q - y;
                    if (u < 1 && (out1 || (u < 0 && (exact || checker_above(b, q)))))
                        continue;
                    more = 1;
                    if (!order)
                        bits |= 1u << q;
                    else if (BIT(firsts[q], p))
                        continue; /* the same two steps in the other order: the same board */
                    int s2[3] = {q, u >= 1 ? u : 0, 0};
                    const int w = pin_step(b, q, u);
                    key_of(b, key);
                    pin_unstep(b, q, u, cq, w, m1);
                    if (setdefault(&g->plays, key, &s1, 1, s2) < 0)
                        return NO_MEMORY;
                }
                if (bits)
                    firsts[p] = bits;
                if (!more && !g->plays.n &&
                    add_single(g, &have_singles, b, x == larger, &s1) < 0)
                    return NO_MEMORY;
            }
            pin_unstep(b, p, t, c, v, mask); /* undo the first step */
        }
    }
    if (g->plays.n) {
        g->result = &g->plays;
        return 2;
    }
    if (have_singles && g->singles.n) {
        /* §2.3 item 5, the larger-die rule. */
        if (g->larger.n) {
            size_t slot;
            for (Py_ssize_t j = 0; j < g->singles.n; j++)
                g->singles.items[j].alive =
                    map_find(&g->larger, g->singles.items[j].board, &slot) >= 0;
        }
        g->result = &g->singles;
        return 1;
    }
    return no_play(g) < 0 ? NO_MEMORY : 0;
}

/* _pin_movable: the points a checker can step from by g->die, descending (into g->movable; the
 * bear-off points from g->board_end on, none while his checker is pinned); returns his checkers
 * outside his home. A point is listed when it holds a free checker of his or is reached by a
 * listed point, and its landing point is open (which cannot change in the segment). */
static int pin_movable(Gen *g, int stuck) {
    const int *b = g->b;
    const int die = g->die, mask = b[PINS];
    int reached[25] = {0}, n = 0, outside = 0;
    for (int p = 24; p > die; p--) {
        const int c = b[p];
        if (c > 0 && p > 6)
            outside += c;
        if (c > 0 || reached[p]) {
            const int t = p - die, v = b[t];
            if (v >= 0 || (v == -1 && !BIT(mask, t))) {
                g->movable[n++] = p;
                reached[t] = 1;
            }
        }
    }
    g->board_end = n;
    for (int p = die; p >= 1; p--)
        if (!stuck && (b[p] > 0 || reached[p]))
            g->movable[n++] = p;
    g->count = n;
    return outside;
}

/* _SOURCE_PRIME: the every-order search keys a state by the product of its steps' sources' primes
 * (the multiset of sources, which decides the board; at most 89**4 < 2**32). */
static const uint32_t source_prime[25] = {1,  2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37,
                                          41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89};

/* Marks state h reached (in g->singles): 1 if it was not, 0 if it was, -1 when out of memory. */
static int reach(Gen *g, uint32_t h) {
    int8_t key[KEY];
    size_t slot;
    memset(key, 0, sizeof key);
    memcpy(key, &h, sizeof h);
    if (map_find(&g->singles, key, &slot) >= 0)
        return 0;
    return setdefault(&g->singles, key, NULL, 0, NULL) < 0 ? -1 : 1;
}

/* _PinSearch.search: equal dice from non-increasing sources (one order per multiset of steps), or
 * with `every` in every order, each state expanded once (where the mother rule can end the game at
 * a step the multiset search would play too early), stopping where the game ends; h is the node's
 * state (every order only). -1 when out of memory. */
static int pin_search(Gen *g, int every, int start, int depth, int outside, uint32_t h) {
    int *b = g->b;
    const int die = g->die, exact = g->exact, mask = b[PINS];
    /* The bear-off points (from board_end on) only when the mover is all home. */
    const int stop = outside ? g->board_end : g->count;
    int moved = 0;
    int8_t key[KEY];
    for (int j = start; j < stop; j++) {
        const int p = g->movable[j], c = b[p];
        if (c <= 0)
            continue;
        const int t = p - die;
        if (t < 0 && (exact || checker_above(b, p)))
            continue;
        moved = 1;
        uint32_t h1 = h;
        if (every) {
            h1 = h * source_prime[p];
            const int fresh = reach(g, h1);
            if (fresh < 0)
                return -1;
            if (!fresh)
                continue; /* the first arrival recorded or expanded it */
        }
        /* The step (legal: its landing point is open, see pin_movable). */
        const int v = pin_step(b, p, t);
        int step[3] = {p, t >= 1 ? t : 0, 0};
        if (depth == g->last || pin_ends(g, b)) {
            /* The last die (every legal step ends a play), or a step that ends the game. */
            key_of(b, key);
            if (record(g, g->total, key, depth, step) < 0)
                return -1;
        } else {
            memcpy(g->path[depth], step, sizeof step);
            if (pin_search(g, every, every ? 0 : j, depth + 1,
                           p > 6 && t <= 6 ? outside - 1 : outside, h1) < 0)
                return -1;
        }
        pin_unstep(b, p, t, c, v, mask);
    }
    if (!moved && depth >= g->best) {
        /* A leaf short of the segment's dice (only the longest leaves are plays). */
        key_of(b, key);
        if (record(g, depth, key, depth, NULL) < 0)
            return -1;
    }
    return 0;
}

/* MoveGenerator._pinning on g->b: the dice used (the answer in g->result), or NO_MEMORY. */
static int pinning(Gen *g, const int *dice, int n_dice) {
    const int *b = g->b;
    /* His own pinned checkers stay pinned for his whole segment, and while one is pinned he cannot
     * bear off. */
    int stuck = 0;
    for (int p = 1; p <= 24; p++)
        stuck |= BIT(b[PINS], p) && b[p] < 0;
    const int two = n_dice == 2 && dice[0] != dice[1];
    const int mother = mother_order(g, b, dice[0], two ? dice[1] : dice[0], n_dice, stuck);
    g->live = mother != 0;
    if (two)
        return pin_two(g, dice[0], dice[1], stuck);
    start_equal(g, dice[0], n_dice);
    const int outside = pin_movable(g, stuck);
    if (mother == 2)
        map_clear(&g->singles); /* the states reached */
    if (pin_search(g, mother == 2, 0, 0, outside, 1) < 0)
        return NO_MEMORY;
    g->result = &g->plays;
    return g->best;
}

/* -- one segment (MoveGenerator.segment, _fast, _ordered) ------------------------------------ */

static int generate(Gen *g, const int *dice, int n_dice, int limit) {
    memcpy(g->b, g->start, sizeof g->b);
    if (g->ordered)
        return ordered_generate(g, dice, n_dice, limit);
    if (n_dice == 2 && dice[0] != dice[1])
        return fast_two(g, dice[0], dice[1], limit);
    return fast_equal(g, dice[0], n_dice, limit);
}

/* The segment's answer in g->result: the dice used, FALLBACK or NO_MEMORY. `start` is the board. */
static int segment(Gen *g, const int *start, const int *dice, int n_dice) {
    memcpy(g->start, start, sizeof g->start);
    if (g->pins) {
        /* The pinning search takes no head limit, six-block or quarter rule. */
        if (g->mother && mother_ended(g, start))
            return FALLBACK; /* §3.12.2: the game is over (Python says so) */
        memcpy(g->b, start, sizeof g->b);
        return pinning(g, dice, n_dice);
    }
    /* §3.3.5: an illegal block lies wholly below O's lowest checker, so it needs six of my points
     * on O's path 1 ... lowest - 1 ("If O has borne off any checker, no block is illegal"). */
    g->block_count = 0;
    if ((g->block_end || g->block_step) && !start[OPP_OFF]) {
        for (int q = 1; q <= 24; q++) {
            const int p = q <= 12 ? q + 12 : q - 12; /* O's point q in my coordinates */
            if (start[p] < 0) {
                if (q >= 7)
                    for (int r = 1; r < q; r++)
                        g->block_points[g->block_count++] = r <= 12 ? r + 12 : r - 12;
                break;
            }
        }
    }
    g->end_blocks = g->block_end && g->block_count;
    int limit = g->head_limit;
    if (limit != NO_LIMIT && start[HEAD] == g->checkers) {
        /* §3.3.4, the first-turn exception: "a segment that starts with all 15 of the player's
         * checkers on his head". */
        const int die = dice[0];
        int same = 1;
        for (int i = 1; i < n_dice; i++)
            same &= dice[i] == die;
        const int fixed = same && (die == 3 || die == 4 || die == 6);
        if (g->first_turn == 0) {
            /* principle: "L = 2 if M2 > M1, otherwise L = 1". */
            const int one = generate(g, dice, n_dice, 1);
            const int two = one < 0 ? one : generate(g, dice, n_dice, 2);
            if (two < 0)
                return two;
            limit = two > one ? 2 : 1;
        } else if (g->first_turn == 1 || !fixed)
            limit = fixed ? 2 : 1;
        else {
            /* head_only: "none of the mover's points 24 - d, 24 - 2d, ..., 12 + d holds an
             * opposing checker". */
            limit = 2;
            for (int p = HEAD - die; p > 12 + die - 1; p -= die)
                if (start[p] < 0)
                    limit = 1;
        }
    }
    return generate(g, dice, n_dice, limit);
}

/* -- the Python interface -------------------------------------------------------------------- */

static PyObject *str_points, *str_bar, *str_off, *str_pinned;

/* Reads `count` exact ints of a tuple into out; 0 when it is not such a tuple of small ints. */
static int read_ints(PyObject *tuple, int *out, Py_ssize_t count) {
    if (!tuple || !PyTuple_CheckExact(tuple) || PyTuple_GET_SIZE(tuple) != count)
        return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (!PyLong_CheckExact(item))
            return 0;
        int overflow;
        long value = PyLong_AsLongAndOverflow(item, &overflow);
        if (overflow || value < -100 || value > 100) /* no layout has more than 15 checkers */
            return 0;
        out[i] = (int)value;
    }
    return 1;
}

/* The pinned points' bits of a position (Position.pinned: points 1...24, ascending); 0 for
 * anything unusual (Python answers the pair). */
static int read_pins(PyObject *pinned, int *mask) {
    if (!pinned || !PyTuple_CheckExact(pinned))
        return 0;
    int last = 0;
    *mask = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pinned); i++) {
        PyObject *item = PyTuple_GET_ITEM(pinned, i);
        if (!PyLong_CheckExact(item))
            return 0;
        const long p = PyLong_AsLong(item);
        if (p <= last || p > 24) {
            PyErr_Clear();
            return 0;
        }
        *mask |= 1 << p;
        last = (int)p;
    }
    return 1;
}

/* The start board of a position, as MoveGenerator.segment builds it (with the pinned points' bits
 * at b[PINS] for a pinning rule set, else 0); 0 for anything unusual. */
static int read_position(PyObject *position, PyTypeObject *type, int pins, int *b) {
    if (Py_TYPE(position) != type)
        return 0;
    PyObject *points = PyObject_GetAttr(position, str_points);
    PyObject *bar = PyObject_GetAttr(position, str_bar);
    PyObject *off = PyObject_GetAttr(position, str_off);
    PyObject *pinned = pins ? PyObject_GetAttr(position, str_pinned) : NULL;
    int pair[2], ok = 0;
    b[PINS] = 0;
    if (read_ints(points, b + 1, 24)) {
        if (read_ints(bar, pair, 2)) {
            b[BAR] = pair[0], b[OPP_BAR] = pair[1];
            if (read_ints(off, pair, 2)) {
                b[0] = pair[0], b[OPP_OFF] = pair[1];
                ok = b[BAR] >= 0 && b[OPP_BAR] >= 0 && b[0] >= 0 && b[OPP_OFF] >= 0 &&
                     (!pins || read_pins(pinned, &b[PINS]));
            }
        }
    }
    Py_XDECREF(points);
    Py_XDECREF(bar);
    Py_XDECREF(off);
    Py_XDECREF(pinned);
    PyErr_Clear(); /* a missing attribute: Python answers the pair (and says what is wrong) */
    return ok;
}

/* The dice as MoveGenerator.checked_segment accepts them (a tuple or list of two different
 * values or 1-4 equal ones, exact ints 1-6; §2.2); 0 otherwise. */
static int read_dice(PyObject *obj, int *dice) {
    if (!PyTuple_CheckExact(obj) && !PyList_CheckExact(obj))
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n < 1 || n > 4)
        return 0;
    PyObject **items = PySequence_Fast_ITEMS(obj);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i]))
            return 0;
        long value = PyLong_AsLong(items[i]);
        if (value < 1 || value > 6) {
            PyErr_Clear();
            return 0;
        }
        dice[i] = (int)value;
        if (n != 2 && dice[i] != dice[0])
            return 0;
    }
    return (int)n;
}

/* Output grows in C buffers and goes to the bytearrays once per call. */
typedef struct {
    char *data;
    Py_ssize_t n, cap;
} Buffer;

static char *buffer_grow(Buffer *buf, Py_ssize_t add) {
    if (buf->n + add > buf->cap) {
        Py_ssize_t cap = buf->cap ? buf->cap : 4096;
        while (cap < buf->n + add)
            cap *= 2;
        char *data = PyMem_Realloc(buf->data, (size_t)cap);
        if (!data)
            return NULL;
        buf->data = data;
        buf->cap = cap;
    }
    char *at = buf->data + buf->n;
    buf->n += add;
    return at;
}

static int flush(Buffer *buf, PyObject *bytearray) {
    if (!buf->n)
        return 0;
    Py_ssize_t size = PyByteArray_GET_SIZE(bytearray);
    if (PyByteArray_Resize(bytearray, size + buf->n) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(bytearray) + size, buf->data, (size_t)buf->n);
    buf->n = 0;
    return 0;
}

/* A result and its index among the pair's results in legal_plays' order; `order` is its board
 * with each count's sign bit flipped, so that memcmp orders the boards as tuples of signed counts
 * (-128 ... 127 become 0 ... 255), then its pinned points' bits big-endian, as a key without pins
 * (28 entries) comes before the same board with pins (29). (One pair's boards never tie: from one
 * start, the counts decide the pins.) */
typedef struct {
    uint8_t order[KEY];
    int32_t index;
    const Entry *entry;
} Ranked;

/* Results by board, ascending: the learning environments' canonical action order
 * (nardy/env/driver.py, play_order). Boards are distinct. */
static int compare_boards(const void *x, const void *y) {
    return memcmp(((const Ranked *)x)->order, ((const Ranked *)y)->order, KEY);
}

static Gen gen; /* the maps are reused from call to call (the GIL is held throughout) */
static Buffer out_boards, out_steps, out_offsets, out_dice, out_index, out_pins, ranked;
static int ready;

static void forget_output(void) {
    out_boards.n = out_steps.n = out_offsets.n = out_dice.n = out_index.n = out_pins.n = 0;
}

PyDoc_STRVAR(legal_results_doc,
"legal_results(pairs, start, position_type, rules, offsets, dice_used, boards, steps, index,\n"
"pinned=None) -> int\n\n"
"Appends the legal results of pairs[start:] to the bytearrays (nardy.core.batch's layout; offsets\n"
"as native int64, continuing from the rows already in boards), and stops at the first pair that\n"
"the Python generator must answer: returns its index, or len(pairs) when every pair is done.\n"
"rules = (checkers, closed_by, hits, exact bear-off, head limit or 0, first turn 0/1/2, six-block\n"
"end check, ordered search, six-block step check, home moves 0 always/1 never/2 until all home,\n"
"runner rule, quarter 0 none/1 step/2 end, trap rule, pins, mother rule 0 off/1 standard/\n"
"2 simple, the opponent's 24 in the mover's coordinates). steps is a bytearray or None. index\n"
"is None (each pair's results in legal_plays' order) or a bytearray: each pair's results sorted\n"
"by board (then pinned bits), and per row (int32) the result's index in legal_plays' order.\n"
"pinned is a bytearray (per row, int64, the result's pinned points' bits) or None.");

/* The rule set tuple of nardy.core.batch.native_rules into the generator's state. */
static int set_rules(PyObject *rules) {
    int checkers, closed_by, hits, exact, head_limit, first_turn, block_end, ordered, block_step,
        home_moves, runner, quarter, trap, pins, mother, opp_head;
    if (!PyArg_ParseTuple(rules, "iippiipppipippii", &checkers, &closed_by, &hits, &exact,
                          &head_limit, &first_turn, &block_end, &ordered, &block_step,
                          &home_moves, &runner, &quarter, &trap, &pins, &mother, &opp_head))
        return -1;
    if (pins && (mother < 0 || mother > 2 || (opp_head != 1 && opp_head != 12))) {
        PyErr_SetString(PyExc_ValueError,
                        "the mother rule is 0-2 and the opponent's 24 is 1 or 12");
        return -1;
    }
    if (!ready) {
        if (map_init(&gen.plays) < 0 || map_init(&gen.singles) < 0 || map_init(&gen.larger) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        ready = 1;
    }
    gen.checkers = checkers;
    gen.closed_at = -closed_by;
    gen.blot = hits ? -1 : 99;
    gen.exact = exact;
    gen.head_limit = head_limit > 0 ? head_limit : NO_LIMIT;
    gen.first_turn = first_turn;
    gen.block_end = block_end;
    gen.ordered = ordered;
    gen.block_step = block_step;
    gen.home_moves = home_moves;
    gen.runner = runner;
    gen.quarter = quarter;
    gen.trap = trap;
    gen.pins = pins;
    gen.mother = mother;
    gen.opp_head = opp_head;
    return 0;
}

#define PAIR_DONE 0
#define PAIR_TO_PYTHON 1 /* the Python generator answers this pair */
#define PAIR_NO_MEMORY 2

/* One pair's legal results appended to the output buffers (in legal_plays' order, or sorted by
 * board with their indices when `sort`; the pinned points' bits with `with_pins`); *rows counts
 * the rows written so far. */
static int emit_pair(int *board, int *dice, int n_dice, int sort, int with_steps, int with_pins,
                     int64_t *rows) {
    if (board[0] == gen.checkers || board[OPP_OFF] == gen.checkers)
        return PAIR_TO_PYTHON; /* §2.6: the game is over (Python says so) */
    int used = segment(&gen, board, dice, n_dice);
    if (used == FALLBACK)
        return PAIR_TO_PYTHON;
    if (used == NO_MEMORY)
        return PAIR_NO_MEMORY;
    /* The pair's results (those no filter dropped), in legal_plays' order or by board. */
    const Map *m = gen.result;
    Ranked *order = (Ranked *)buffer_grow(&ranked, (Py_ssize_t)sizeof(Ranked) * m->n);
    if (!order)
        return PAIR_NO_MEMORY;
    ranked.n = 0; /* scratch: reused by the next pair */
    int32_t kept = 0;
    for (Py_ssize_t j = 0; j < m->n; j++)
        if (m->items[j].alive) {
            order[kept].entry = &m->items[j];
            order[kept].index = kept;
            if (sort) {
                const int8_t *b = m->items[j].board;
                for (int i = 0; i < BOARD; i++)
                    order[kept].order[i] = (uint8_t)b[i] ^ 0x80;
                uint32_t pins;
                memcpy(&pins, b + BOARD, sizeof pins);
                for (int i = 0; i < 4; i++)
                    order[kept].order[BOARD + i] = (uint8_t)(pins >> (24 - 8 * i));
            }
            kept++;
        }
    if (sort)
        qsort(order, (size_t)kept, sizeof(Ranked), compare_boards);
    char *at = buffer_grow(&out_boards, (Py_ssize_t)BOARD * kept);
    char *st = with_steps ? buffer_grow(&out_steps, (Py_ssize_t)STEP_BYTES * kept) : NULL;
    char *ix = sort ? buffer_grow(&out_index, (Py_ssize_t)sizeof(int32_t) * kept) : NULL;
    char *pn = with_pins ? buffer_grow(&out_pins, (Py_ssize_t)sizeof(int64_t) * kept) : NULL;
    if (!at || (with_steps && !st) || (sort && !ix) || (with_pins && !pn))
        return PAIR_NO_MEMORY;
    for (int32_t j = 0; j < kept; j++) {
        memcpy(at + (Py_ssize_t)BOARD * j, order[j].entry->board, BOARD);
        if (st)
            memcpy(st + (Py_ssize_t)STEP_BYTES * j, order[j].entry->steps, STEP_BYTES);
        if (ix)
            memcpy(ix + sizeof(int32_t) * j, &order[j].index, sizeof(int32_t));
        if (pn) {
            uint32_t bits;
            memcpy(&bits, order[j].entry->board + BOARD, sizeof bits);
            const int64_t wide = bits;
            memcpy(pn + sizeof(int64_t) * j, &wide, sizeof wide);
        }
    }
    *rows += kept;
    char *d = buffer_grow(&out_dice, 1);
    char *o = buffer_grow(&out_offsets, sizeof *rows);
    if (!d || !o)
        return PAIR_NO_MEMORY;
    *d = (char)used;
    memcpy(o, rows, sizeof *rows);
    return PAIR_DONE;
}

/* The output buffers into the bytearrays (or forgotten after an error); the stop index, or NULL. */
static PyObject *finish(int failed, Py_ssize_t index, PyObject *offsets, PyObject *dice_used,
                        PyObject *boards, PyObject *steps, PyObject *index_out,
                        PyObject *pins_out) {
    if (failed) {
        forget_output();
        return PyErr_NoMemory();
    }
    if (flush(&out_boards, boards) < 0 || (steps != Py_None && flush(&out_steps, steps) < 0) ||
        (index_out != Py_None && flush(&out_index, index_out) < 0) ||
        (pins_out != Py_None && flush(&out_pins, pins_out) < 0) ||
        flush(&out_offsets, offsets) < 0 || flush(&out_dice, dice_used) < 0) {
        forget_output();
        return NULL;
    }
    return PyLong_FromSsize_t(index);
}

static int check_outputs(PyObject *steps, PyObject *index_out, PyObject *pins_out) {
    if ((steps != Py_None && !PyByteArray_Check(steps)) ||
        (index_out != Py_None && !PyByteArray_Check(index_out)) ||
        (pins_out != Py_None && !PyByteArray_Check(pins_out))) {
        PyErr_SetString(PyExc_TypeError, "steps, index and pinned must be bytearrays or None");
        return -1;
    }
    return 0;
}

static PyObject *legal_results(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *pairs, *type, *rules, *offsets, *dice_used, *boards, *steps, *index_out,
        *pins_out = Py_None;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nO!O!O!O!O!OO|O", &PyList_Type, &pairs, &start, &PyType_Type,
                          &type, &PyTuple_Type, &rules, &PyByteArray_Type, &offsets,
                          &PyByteArray_Type, &dice_used, &PyByteArray_Type, &boards, &steps,
                          &index_out, &pins_out))
        return NULL;
    if (check_outputs(steps, index_out, pins_out) < 0 || set_rules(rules) < 0)
        return NULL;
    const int sort = index_out != Py_None;
    int64_t rows = PyByteArray_GET_SIZE(boards) / BOARD;
    Py_ssize_t index = start, count = PyList_GET_SIZE(pairs);
    int emitted = PAIR_DONE;
    for (; index < count; index++) {
        PyObject *pair = PyList_GET_ITEM(pairs, index);
        int board[BOARD + 1], dice[4], n_dice;
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !read_position(PyTuple_GET_ITEM(pair, 0), (PyTypeObject *)type, gen.pins, board) ||
            !(n_dice = read_dice(PyTuple_GET_ITEM(pair, 1), dice)))
            break;
        emitted =
            emit_pair(board, dice, n_dice, sort, steps != Py_None, pins_out != Py_None, &rows);
        if (emitted != PAIR_DONE)
            break;
    }
    return finish(emitted == PAIR_NO_MEMORY, index, offsets, dice_used, boards, steps, index_out,
                  pins_out);
}

PyDoc_STRVAR(legal_results_of_boards_doc,
"legal_results_of_boards(boards_in, dice_in, start, rules, offsets, dice_used, boards, steps,\n"
"index, pins_in=None, pinned=None) -> int\n\n"
"legal_results for pairs given as arrays: boards_in holds 28 signed bytes per pair (the result\n"
"board layout: mover's view), dice_in 4 signed bytes per pair (the dice, then zeros: two\n"
"values or 1-4 equal ones). Appends from pair `start` on and stops, as legal_results does, at\n"
"the first pair the Python generator must answer. A pinning rule set needs pins_in (per pair a\n"
"native int64, the pinned points' bits) and pinned (legal_results' pinned bytearray).");

/* A board of boards_in as the generator's start board, with `pins` its pinned points' bits;
 * 0 for anything unusual (a negative bar or off count, a bit outside points 1...24: Python
 * answers the pair and says what is wrong). */
static int read_board(const int8_t *in, int64_t pins, int *b) {
    for (int i = 0; i < BOARD; i++)
        b[i] = in[i];
    b[BOARD] = (int)pins;
    return b[0] >= 0 && b[BAR] >= 0 && b[OPP_BAR] >= 0 && b[OPP_OFF] >= 0 &&
           (pins & ~(int64_t)0x1fffffe) == 0;
}

/* Dice of dice_in (as read_dice takes them: two values, or 1-4 equal ones); 0 when not. */
static int read_dice_bytes(const int8_t *in, int *dice) {
    int n = 0;
    while (n < 4 && in[n] != 0)
        n++;
    if (n == 0)
        return 0;
    for (int i = 0; i < 4; i++) {
        if (i >= n ? in[i] != 0 : in[i] < 1 || in[i] > 6)
            return 0;
        if (i < n) {
            dice[i] = in[i];
            if (n != 2 && dice[i] != dice[0])
                return 0;
        }
    }
    return n;
}

static PyObject *legal_results_of_boards(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer boards_in, dice_in, pins_buffer = {0};
    PyObject *rules, *offsets, *dice_used, *boards, *steps, *index_out, *pins_in = Py_None,
                                                                      *pins_out = Py_None;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "y*y*nO!O!O!O!OO|OO", &boards_in, &dice_in, &start,
                          &PyTuple_Type, &rules, &PyByteArray_Type, &offsets, &PyByteArray_Type,
                          &dice_used, &PyByteArray_Type, &boards, &steps, &index_out, &pins_in,
                          &pins_out))
        return NULL;
    PyObject *found = NULL;
    Py_ssize_t count = boards_in.len / BOARD;
    if (pins_in != Py_None && PyObject_GetBuffer(pins_in, &pins_buffer, PyBUF_SIMPLE) < 0)
        goto done;
    if (boards_in.len != count * BOARD || dice_in.len != count * 4 ||
        (pins_in != Py_None && pins_buffer.len != count * (Py_ssize_t)sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError,
                        "28 board bytes, 4 dice bytes (and 8 pin bytes) per pair");
        goto done;
    }
    if (check_outputs(steps, index_out, pins_out) < 0 || set_rules(rules) < 0)
        goto done;
    if (gen.pins != (pins_in != Py_None) || gen.pins != (pins_out != Py_None)) {
        PyErr_SetString(PyExc_ValueError,
                        "a pinning rule set's boards need their pins (pins_in and pinned), "
                        "other rule sets' none");
        goto done;
    }
    const int sort = index_out != Py_None;
    int64_t rows = PyByteArray_GET_SIZE(boards) / BOARD;
    const int8_t *board_bytes = (const int8_t *)boards_in.buf;
    const int8_t *dice_bytes = (const int8_t *)dice_in.buf;
    const char *pin_bytes = pins_in != Py_None ? (const char *)pins_buffer.buf : NULL;
    Py_ssize_t index = start < 0 ? 0 : start;
    int emitted = PAIR_DONE;
    for (; index < count; index++) {
        int board[BOARD + 1], dice[4], n_dice;
        int64_t pins = 0;
        if (pin_bytes)
            memcpy(&pins, pin_bytes + sizeof pins * index, sizeof pins);
        if (!read_board(board_bytes + BOARD * index, pins, board) ||
            !(n_dice = read_dice_bytes(dice_bytes + 4 * index, dice)))
            break;
        emitted =
            emit_pair(board, dice, n_dice, sort, steps != Py_None, pins_out != Py_None, &rows);
        if (emitted != PAIR_DONE)
            break;
    }
    found = finish(emitted == PAIR_NO_MEMORY, index, offsets, dice_used, boards, steps, index_out,
                   pins_out);
done:
    if (pins_buffer.obj)
        PyBuffer_Release(&pins_buffer);
    PyBuffer_Release(&boards_in);
    PyBuffer_Release(&dice_in);
    return found;
}

static PyMethodDef methods[] = {
    {"legal_results", legal_results, METH_VARARGS, legal_results_doc},
    {"legal_results_of_boards", legal_results_of_boards, METH_VARARGS,
     legal_results_of_boards_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_batchgen",
    "The move generator's searches in C for nardy.core.batch (see core/_batchgen.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__batchgen(void) {
    str_points = PyUnicode_InternFromString("points");
    str_bar = PyUnicode_InternFromString("bar");
    str_off = PyUnicode_InternFromString("off");
    str_pinned = PyUnicode_InternFromString("pinned");
    if (!str_points || !str_bar || !str_off || !str_pinned)
        return NULL;
    PyObject *m = PyModule_Create(&module);
#ifdef COMPILED_FROM_SHA256
    /* setup.py's digest of this file: nardy.core.batch does not use a module built from another. */
    if (m && PyModule_AddStringConstant(m, "COMPILED_FROM_SHA256", COMPILED_FROM_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
