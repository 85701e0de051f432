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
 * which blocks to ask again (the counts and their heap: Counts, shared with the node
 * search). Pure: no I/O.
 */
#ifndef BERTH_PROFILE_BLOCK_WALK_H
#define BERTH_PROFILE_BLOCK_WALK_H

#include "_profile_due.h"

/* A walk over ``nb`` block profiles for copies of ``demand`` during ``duration``. */
typedef struct {
    NativeProfile **blocks;
    Py_ssize_t nb;
    int64_t limit;
    int has_limit;
    PyObject *ends;
    Counts c;      /* per block: copies its sum holds through the window */
    Py_ssize_t at; /* the last candidate's place in ``ends`` */
} BlockWalk;

/* Every block asked at ``start``. Scratch (set by the caller in ``c``): slots, deferred,
 * hints (nb each, hints 0) and the heap's items (nb); ``c``'s demand, count and duration. */
static void block_walk_begin(BlockWalk *w, int64_t start) {
    Counts *c = &w->c;
    c->lazy = !w->has_limit;
    c->ask_limit = w->has_limit ? w->limit : NEVER;
    c->waiting = 0;
    c->held = 0;
    c->due.n = 0;
    w->at = 0;
    for (Py_ssize_t b = 0; b < w->nb; b++) {
        c->slots[b] = 0;
        count_ask(c, w->blocks[b], b, start, 0);
    }
}

/* The first candidate from ``start`` on (``start`` no earlier than the last call's) at
 * which the blocks may hold the count: 1 with it in ``*found`` (or the candidate the walk
 * stopped at once stop() said so), 0 when none can, -1 on error. */
static int block_walk_floor(BlockWalk *w, int64_t start, PyObject *stop, int64_t *found) {
    Counts *c = &w->c;
    /* Blocks deferred at an earlier start: asked at this one. */
    Py_ssize_t pending = c->waiting;
    c->waiting = 0;
    for (Py_ssize_t i = 0; i < pending; i++) {
        Py_ssize_t b = c->deferred[i];
        count_ask(c, w->blocks[b], b, start, 0);
    }
    for (;;) {
        while (c->due.n && c->due.items[0].time <= start) {
            Py_ssize_t b = c->due.items[0].index;
            count_ask(c, w->blocks[b], b, start, 1);
        }
        if (c->held >= c->count) {
            *found = start;
            return 1;
        }
        for (Py_ssize_t i = 0; i < c->waiting; i++) /* (none at ``start``: when may that change?) */
            count_due_again(c, w->blocks[c->deferred[i]], c->deferred[i], start);
        c->waiting = 0;
        w->at = c->due.n ? ends_from(w->ends, c->due.items[0].time, w->at)
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
