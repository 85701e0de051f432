/* The blocks' floor as a walk that resumes: berth.core.node_blocks.NodeBlocks.floor in C.
 * Each block of nodes has a summed profile; the copies of a slot the block's sum holds
 * through a window bound the slots its nodes hold there together, so a start where the
 * blocks' bounds add up to less than the job's count holds no placement. The node
 * search asks this walk for the first such start from a candidate on, at its first
 * candidate and (searches without a stop()) at each later one: at 4,096 nodes and
 * ~35,000 reservation ends, a short job of one-cpu slots met room in the whole cluster's
 * sum at hundreds of candidates where the blocks' bounds fell short at all but a few,
 * and each of those candidates asked its nodes again (10,000 node questions, 5-12 ms).
 * Starts only grow, so each block's answer holds until its ``until`` and a heap says
 * which blocks to ask again. Pure: no I/O.
 */
#ifndef BERTH_PROFILE_BLOCK_WALK_H
#define BERTH_PROFILE_BLOCK_WALK_H

#include "_profile_due.h"

/* A walk over ``nb`` block profiles for copies of ``demand`` during ``duration``. */
typedef struct {
    NativeProfile **blocks;
    Py_ssize_t nb;
    const int64_t *demand;
    int64_t count, duration, limit, ask_limit;
    int has_limit, lazy;
    PyObject *ends;
    int64_t *slots;       /* per block: copies its sum holds through the window */
    Py_ssize_t *deferred; /* blocks with no room at the start they were last asked at */
    Py_ssize_t waiting;
    Py_ssize_t *hints; /* per block: the step it was last asked at (see step_near) */
    Heap due;
    int64_t held;
    Py_ssize_t at; /* the last candidate's place in ``ends`` */
} BlockWalk;

/* Ask block ``b`` at ``start``: its copies and when to ask again (or defer it: as the
 * node search, see earliest_shared). */
static void block_ask(BlockWalk *w, Py_ssize_t b, int64_t start, int in_heap) {
    NativeProfile *p = w->blocks[b];
    Py_ssize_t first = step_near(p, start, &w->hints[b]);
    if (w->lazy && !room_at(p, w->demand, start, first)) {
        w->held -= w->slots[b];
        w->slots[b] = 0;
        w->deferred[w->waiting++] = b;
        if (in_heap) heap_pop(&w->due);
        return;
    }
    int64_t k, until;
    copies_until_from(p, w->demand, start, w->duration, w->count, w->ask_limit, first, &k, &until);
    w->held += k - w->slots[b];
    w->slots[b] = k;
    if (in_heap) heap_replace(&w->due, until, b);
    else heap_push(&w->due, until, b);
}

/* Every block asked at ``start``. Scratch (set by the caller): slots, deferred, hints
 * (nb each, hints 0) and the heap's items (nb). */
static void block_walk_begin(BlockWalk *w, int64_t start) {
    w->lazy = !w->has_limit;
    w->ask_limit = w->has_limit ? w->limit : NEVER;
    w->waiting = 0;
    w->held = 0;
    w->at = 0;
    w->due.n = 0;
    for (Py_ssize_t b = 0; b < w->nb; b++) {
        w->slots[b] = 0;
        block_ask(w, b, start, 0);
    }
}

/* The first candidate from ``start`` on (``start`` no earlier than the last call's) at
 * which the blocks may hold the count: 1 with it in ``*found`` (or the candidate the walk
 * stopped at once stop() said so), 0 when none can, -1 on error. */
static int block_walk_floor(BlockWalk *w, int64_t start, PyObject *stop, int64_t *found) {
    /* Blocks deferred at an earlier start: asked at this one. */
    Py_ssize_t pending = w->waiting;
    w->waiting = 0;
    for (Py_ssize_t i = 0; i < pending; i++) block_ask(w, w->deferred[i], start, 0);
    for (;;) {
        while (w->due.n && w->due.items[0].time <= start)
            block_ask(w, w->due.items[0].index, start, 1);
        if (w->held >= w->count) {
            *found = start;
            return 1;
        }
        for (Py_ssize_t i = 0; i < w->waiting; i++) { /* (none at ``start``: when may that change?) */
            Py_ssize_t b = w->deferred[i];
            int64_t k, until;
            copies_until_from(w->blocks[b], w->demand, start, w->duration, w->count,
                              w->ask_limit, step_near(w->blocks[b], start, &w->hints[b]), &k,
                              &until);
            heap_push(&w->due, until, b);
        }
        w->waiting = 0;
        w->at = w->due.n ? ends_from(w->ends, w->due.items[0].time, w->at)
                         : PyList_GET_SIZE(w->ends);
        int more = candidate(w->ends, w->at, w->limit, w->has_limit, &start);
        if (more <= 0) return more;
        int over = stopped(stop);
        if (over != 0) {
            *found = start;
            return over < 0 ? -1 : 1;
        }
    }
}

#endif
