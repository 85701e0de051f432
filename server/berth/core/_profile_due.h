/* What the node search (_profile_search.h) and the block walk walk with: a heap of (time,
 * index) saying which node or block to ask again and when, the counts per profile it
 * orders, the plan's reservation ends (a sorted Python list of ints) read in place, and
 * the caller's stop(). Pure: no I/O.
 */
#ifndef BERTH_PROFILE_DUE_H
#define BERTH_PROFILE_DUE_H

#include "_profile_steps.h"

/* ---- a heap of (time, index): who is due to be asked again, and when --------------- */

typedef struct {
    int64_t time;
    Py_ssize_t index; /* a node (>= 0) or a block (-1 - its position) */
} Due;

typedef struct {
    Due *items;
    Py_ssize_t n;
} Heap;

static inline int due_before(Due a, Due b) {
    return a.time < b.time || (a.time == b.time && a.index < b.index);
}

static void sift_down(Heap *h, Py_ssize_t i) {
    Due item = h->items[i];
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= h->n) break;
        if (child + 1 < h->n && due_before(h->items[child + 1], h->items[child])) child++;
        if (!due_before(h->items[child], item)) break;
        h->items[i] = h->items[child];
        i = child;
    }
    h->items[i] = item;
}

static void heap_push(Heap *h, int64_t time, Py_ssize_t index) {
    Due item = {time, index};
    Py_ssize_t i = h->n++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (!due_before(item, h->items[parent])) break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = item;
}

static void heap_pop(Heap *h) {
    if (--h->n > 0) {
        h->items[0] = h->items[h->n];
        sift_down(h, 0);
    }
}

static void heap_replace(Heap *h, int64_t time, Py_ssize_t index) {
    h->items[0] = (Due){time, index};
    sift_down(h, 0);
}

/* ---- counts per profile, each until it may change ---------------------------------- */

/* What a walk over profiles (the node search's nodes, the block walk's blocks) keeps:
 * per profile the copies of ``demand`` it holds through the window from the current
 * start (at most ``count``), their sum, a heap of when each count may change, and the
 * profiles with no room at the start they were last asked at, asked when passed. */
typedef struct {
    const int64_t *demand;
    int64_t count, duration, ask_limit;
    int lazy;               /* defer a profile with no room at the start (no limit) */
    int64_t *slots;         /* per profile: its copies at the start (0: none, or not asked) */
    Py_ssize_t *hints;      /* per profile: the step it was last asked at (see step_near) */
    Py_ssize_t *deferred;   /* profiles with no room at the start, asked when passed */
    Py_ssize_t waiting;
    Heap due;
    int64_t held;           /* the slots summed */
} Counts;

/* Ask profile ``p`` (index ``i``) at ``start``: its count and when to ask again, or defer
 * it when it has no room at ``start`` (the costly part of asking, the walk to its next
 * long enough run, waits until a walk goes past ``start``). ``in_heap``: ``i`` is the
 * heap's top. Returns the count it had before. */
static int64_t count_ask(Counts *c, NativeProfile *p, Py_ssize_t i, int64_t start, int in_heap) {
    int64_t before = c->slots[i];
    Py_ssize_t first = step_near(p, start, &c->hints[i]);
    if (c->lazy && !room_at(p, c->demand, start, first)) {
        c->held -= before;
        c->slots[i] = 0;
        c->deferred[c->waiting++] = i;
        if (in_heap) heap_pop(&c->due);
        return before;
    }
    int64_t k, until;
    copies_until_from(p, c->demand, start, c->duration, c->count, c->ask_limit, first, &k,
                      &until);
    c->held += k - before;
    c->slots[i] = k;
    if (in_heap) heap_replace(&c->due, until, i);
    else heap_push(&c->due, until, i);
    return before;
}

/* A profile deferred at ``start`` (none there): on the heap at its next chance. */
static void count_due_again(Counts *c, NativeProfile *p, Py_ssize_t i, int64_t start) {
    int64_t k, until;
    copies_until_from(p, c->demand, start, c->duration, c->count, c->ask_limit,
                      step_near(p, start, &c->hints[i]), &k, &until);
    heap_push(&c->due, until, i);
}

/* ---- the plan's ends (a sorted Python list of ints) --------------------------------- */

static int64_t end_at(PyObject *ends, Py_ssize_t i) {
    return PyLong_AsLongLong(PyList_GET_ITEM(ends, i));
}

/* bisect_left(ends, time) knowing that no end before ``from`` is at or after ``time``
 * (a search asks for ever later times, so it passes its last answer): a gallop from
 * there, then a bisection, a few probes where the whole list took ~16 at 50,000 ends;
 * -1 with an exception set if an end is not an int64. */
static Py_ssize_t ends_from(PyObject *ends, int64_t time, Py_ssize_t from) {
    Py_ssize_t n = PyList_GET_SIZE(ends);
    if (from < 0) from = 0;
    if (from >= n) return n;
    int64_t end = end_at(ends, from);
    if (end == -1 && PyErr_Occurred()) return -1;
    if (end >= time) return from;
    Py_ssize_t reach = 1; /* ends[from + reach / 2] < time */
    for (;;) {
        if (from + reach >= n) break;
        end = end_at(ends, from + reach);
        if (end == -1 && PyErr_Occurred()) return -1;
        if (end >= time) break;
        reach *= 2;
    }
    Py_ssize_t lo = from + reach / 2 + 1, hi = from + reach < n ? from + reach : n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        end = end_at(ends, mid);
        if (end == -1 && PyErr_Occurred()) return -1;
        if (end < time) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Whether the candidate at ``at`` of ``ends`` exists (and is before the limit): 1, 0, or
 * -1 on error; its time in ``*start``. */
static int candidate(PyObject *ends, Py_ssize_t at, int64_t limit, int has_limit,
                     int64_t *start) {
    if (at < 0) return -1;
    if (at >= PyList_GET_SIZE(ends)) return 0;
    *start = end_at(ends, at);
    if (*start == -1 && PyErr_Occurred()) return -1;
    return !(has_limit && *start >= limit);
}

/* stop(): 1 when it says the caller's slice is over, 0 when not (or none), -1 on error. */
static int stopped(PyObject *stop) {
    if (stop == Py_None) return 0;
    PyObject *said = PyObject_CallNoArgs(stop);
    if (said == NULL) return -1;
    int over = PyObject_IsTrue(said);
    Py_DECREF(said);
    return over;
}

#endif
