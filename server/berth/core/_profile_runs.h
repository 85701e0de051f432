/* Runs of bookings on a node plan of C profiles, one call for many jobs. Deadline
 * admission (QoPS) takes out every waiting job after its insertion point and places
 * them again one by one, in deadline order: about 800 jobs per decision with 1,000
 * waiting on 256 nodes. Each placement was a dozen Python calls around the C search,
 * the placement's amounts and their booking (a quarter of a decision); here the same
 * three C functions are called in a loop, with the plan's list of ends kept as
 * NodePlan.reserve and release keep it. berth.core.node_board's place_each and
 * take_each call these only for a plan they describe fully (no fork sharing its
 * profiles, no summed profiles of node sets, no slots known at an instant); the
 * Python path is their reference (tests/property/test_board_runs.py). Pure: no I/O.
 */
#ifndef BERTH_PROFILE_RUNS_H
#define BERTH_PROFILE_RUNS_H

#include "_profile_books.h"
#include "_profile_search.h"

/* bisect_right(ends, time), or -1 with an exception set. */
static Py_ssize_t ends_after(PyObject *ends, int64_t time) {
    Py_ssize_t lo = 0, hi = PyList_GET_SIZE(ends);
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        int64_t end = end_at(ends, mid);
        if (end == -1 && PyErr_Occurred()) return -1;
        if (time < end) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* How many of a run's last summed starts place_run keeps to bound the next ones. */
#define RUN_FLOORS 32

/* A summed start a run found: the earliest start from ``after`` on where ``summed`` held
 * ``total`` for ``duration``. */
typedef struct {
    const NativeProfile *summed;
    int64_t total[MAX_FIELDS], duration, after, found;
} SummedStart;

/* The earliest start from ``after`` on where ``summed`` holds ``total`` for ``duration``
 * (0 for none), bounded below by the starts found before in the run (``floors``, the
 * last ``n`` of them, kept here in a ring): the run only takes room, so a request at
 * least as large, as long and as late as an earlier one fits no earlier than it did.
 * A run of 800 jobs walked the aggregate from the present for each, over the full
 * steps its earlier jobs had made (a third of the node search). */
static int summed_start(NativeProfile *summed, const int64_t *total, int64_t duration,
                        int64_t after, SummedStart *floors, Py_ssize_t *n, int64_t *found) {
    int k = summed->k;
    int64_t from = after;
    Py_ssize_t kept = *n < RUN_FLOORS ? *n : RUN_FLOORS;
    for (Py_ssize_t i = 0; i < kept; i++) {
        const SummedStart *f = &floors[i];
        if (f->summed != summed || f->found <= from || f->duration > duration || f->after > after)
            continue;
        int larger = 1;
        for (int r = 0; r < k && larger; r++) larger = total[r] >= f->total[r];
        if (larger) from = f->found;
    }
    if (!earliest(summed, total, duration, from, 0, 0, 0, 0, found)) return 0;
    SummedStart *f = &floors[(*n)++ % RUN_FLOORS];
    f->summed = summed;
    memcpy(f->total, total, sizeof(int64_t) * (size_t)k);
    f->duration = duration;
    f->after = after;
    f->found = *found;
    return 1;
}

/* A start a run found on the nodes for a job with no node count. */
typedef struct {
    int64_t demand[MAX_FIELDS], count, duration, after, found;
} NodeStart;

/* The latest start the run found before (``floors``, its last ``n``) for a job whose
 * placement this one's would contain: slots no larger, no more of them, no node count,
 * no longer, asked no later. The run only takes room, so wherever this job fits, that
 * one would have fit then: this one starts no earlier. ``after`` if none. */
static int64_t node_floor(const int64_t *demand, int k, int64_t count, int64_t duration,
                          int64_t after, const NodeStart *floors, Py_ssize_t n) {
    int64_t from = after;
    Py_ssize_t kept = n < RUN_FLOORS ? n : RUN_FLOORS;
    for (Py_ssize_t i = 0; i < kept; i++) {
        const NodeStart *f = &floors[i];
        if (f->found <= from || f->count > count || f->duration > duration || f->after > after)
            continue;
        int larger = 1;
        for (int r = 0; r < k && larger; r++) larger = demand[r] >= f->demand[r];
        if (larger) from = f->found;
    }
    return from;
}

/* A job of a run, as read from its tuple (see place_run). */
typedef struct {
    PyObject *tuple;
    NativeProfile *summed;
    int64_t slot[MAX_FIELDS], total[MAX_FIELDS], count, nodes, duration, after, deadline;
} RunJob;

static int run_job_of(PyObject *job, RunJob *out) {
    if (!PyTuple_Check(job) || PyTuple_GET_SIZE(job) != 10) {
        PyErr_SetString(PyExc_TypeError, "a job of place_run() is a tuple of ten");
        return -1;
    }
    out->tuple = job;
    if ((out->summed = profile_arg(PyTuple_GET_ITEM(job, 9), -1)) == NULL) return -1;
    int k = out->summed->k;
    const int64_t *amounts = demand_of(PyTuple_GET_ITEM(job, 0), k);
    if (amounts == NULL) return -1;
    memcpy(out->slot, amounts, sizeof(int64_t) * (size_t)k);
    if ((amounts = demand_of(PyTuple_GET_ITEM(job, 1), k)) == NULL) return -1;
    memcpy(out->total, amounts, sizeof(int64_t) * (size_t)k);
    PyObject *blocks = PyTuple_GET_ITEM(job, 8);
    if (!PyList_Check(PyTuple_GET_ITEM(job, 7)) || (blocks != Py_None && !PyList_Check(blocks))) {
        PyErr_SetString(PyExc_TypeError, "a job of place_run() names its nodes and blocks in lists");
        return -1;
    }
    return as_time(PyTuple_GET_ITEM(job, 2), &out->count) < 0 ||
                   as_time(PyTuple_GET_ITEM(job, 3), &out->nodes) < 0 ||
                   as_time(PyTuple_GET_ITEM(job, 4), &out->duration) < 0 ||
                   as_time(PyTuple_GET_ITEM(job, 5), &out->after) < 0 ||
                   as_time(PyTuple_GET_ITEM(job, 6), &out->deadline) < 0
               ? -1
               : 0;
}

/* What a run knows of its searches so far, to bound the next ones. */
typedef struct {
    SummedStart summed[RUN_FLOORS];
    NodeStart nodes[RUN_FLOORS];
    Py_ssize_t summed_n, nodes_n;
} RunFloors;

/* Where the job's search may begin: no placement of it starts earlier. A job an earlier
 * one's placement would fit in starts no earlier than it; else, no earlier than where
 * the summed profile first holds it (asked from there, the search finds what it finds
 * from the job's ``after``: nothing fits before). */
static int64_t search_from(const RunJob *job, RunFloors *floors, int *summed_holds) {
    *summed_holds = 0;
    int64_t from = node_floor(job->slot, job->summed->k, job->count, job->duration, job->after,
                              floors->nodes, floors->nodes_n);
    if (from > job->after) return from;
    int64_t first;
    if (!summed_start(job->summed, job->total, job->duration, job->after, floors->summed,
                      &floors->summed_n, &first))
        return job->after; /* (none: the search says so) */
    *summed_holds = 1; /* (the search need not find it again) */
    return first;
}

/* The job found at ``start`` (an int): kept as a bound for the next searches, if it
 * names no node count. */
static void found_at(const RunJob *job, int64_t start, RunFloors *floors) {
    if (job->nodes != 0) return;
    NodeStart *f = &floors->nodes[floors->nodes_n++ % RUN_FLOORS];
    memcpy(f->demand, job->slot, sizeof(int64_t) * (size_t)job->summed->k);
    f->count = job->count;
    f->duration = job->duration;
    f->after = job->after;
    f->found = start;
}

/* Book ``placement`` at ``start`` as NodePlan.reserve does (its end into ``ends``); the
 * (start, placement, held) placed, or NULL with an exception set. */
static PyObject *book_placed(PyObject *module, PyObject *const *plan, const RunJob *job,
                             PyObject *start, int64_t at, PyObject *placement) {
    PyObject *demand = PyTuple_GET_ITEM(job->tuple, 0);
    PyObject *pair[2] = {placement, demand};
    PyObject *held = held_of(module, pair, 2);
    PyObject *end = held == NULL ? NULL : PyLong_FromLongLong(plus(at, job->duration));
    PyObject *booking[8] = {plan[0], held, start, end, plan[5], plan[2], plan[3], plan[4]};
    PyObject *booked = end == NULL ? NULL : book_nodes(module, booking, 8);
    Py_XDECREF(booked);
    Py_ssize_t where = booked == NULL ? -1 : ends_after(plan[1], plus(at, job->duration));
    PyObject *entry = where < 0 || PyList_Insert(plan[1], where, end) < 0
                          ? NULL
                          : PyTuple_Pack(3, start, placement, held);
    Py_XDECREF(end);
    Py_XDECREF(held);
    return entry;
}

/* place_run(profiles, ends, aggregate, blocks, block_of, block_steps, jobs): each job of
 * the list ``jobs``, a tuple (demand, total, count, nodes, duration, after, deadline,
 * able, blocks_of_able, summed), placed in turn at its earliest start from ``after`` on
 * (node_search.earliest_shared, with no limit) and booked there on the nodes, the
 * aggregate and the blocks' sums (book_nodes), its end put in ``ends``. Stops after the
 * first job that completes after its deadline, or at a job with no start (None in the
 * answer). The answer: per job placed, (start, placement, held). */
static PyObject *place_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("place_run", nargs, 7, 7) < 0) return NULL;
    PyObject *jobs = args[6];
    int64_t block_steps;
    if (!PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyList_Check(jobs)) {
        PyErr_SetString(PyExc_TypeError, "place_run() takes lists of profiles, ends and jobs");
        return NULL;
    }
    if (as_time(args[5], &block_steps) < 0) return NULL;
    PyObject *taken = PyLong_FromLong(-1), *placed = PyList_New(0);
    /* profiles, ends, aggregate, blocks, block_of, and the sign of a booking */
    PyObject *plan[6] = {args[0], args[1], args[2], args[3], args[4], taken};
    RunFloors floors = {.summed_n = 0, .nodes_n = 0};
    Scratch scratch = {NULL, 0}; /* (the searches' memory, one after another) */
    RunJob job;
    if (placed == NULL || taken == NULL) goto failed;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(jobs); i++) {
        if (run_job_of(PyList_GET_ITEM(jobs, i), &job) < 0) goto failed;
        int k = job.summed->k;
        Search s = {.profiles = args[0], .ends = args[1], .stop = Py_None, .k = k,
                    .nodes = job.nodes, .c = {.count = job.count, .duration = job.duration}};
        memcpy(s.demand, job.slot, sizeof(int64_t) * (size_t)k);
        memcpy(s.total, job.total, sizeof(int64_t) * (size_t)k);
        int summed_holds;
        int64_t from = search_from(&job, &floors, &summed_holds);
        PyObject *found = search_with(&s, PyTuple_GET_ITEM(job.tuple, 7),
                                      PyTuple_GET_ITEM(job.tuple, 8), job.summed, Py_None, from,
                                      summed_holds, block_steps, &scratch);
        if (found == NULL) goto failed;
        if (found == Py_None) { /* (the caller says why none is an error) */
            int appended = PyList_Append(placed, found);
            Py_DECREF(found);
            if (appended < 0) goto failed;
            break;
        }
        PyObject *start = PyTuple_GET_ITEM(found, 0);
        int64_t at;
        PyObject *entry = as_time(start, &at) < 0 ? NULL
                          : book_placed(module, plan, &job, start, at,
                                        PyTuple_GET_ITEM(found, 1));
        int appended = entry == NULL ? -1 : PyList_Append(placed, entry);
        Py_XDECREF(entry);
        Py_DECREF(found);
        if (appended < 0) goto failed;
        found_at(&job, at, &floors);
        if (plus(at, job.duration) > job.deadline) break; /* late: the caller takes it on */
    }
    Py_DECREF(taken);
    PyMem_Free(scratch.memory);
    return placed;
failed:
    Py_XDECREF(placed);
    Py_XDECREF(taken);
    PyMem_Free(scratch.memory);
    return NULL;
}

/* A window of release_run: its end, and its place in the list. */
typedef struct {
    int64_t end;
    Py_ssize_t index;
} Release;

/* Latest end first; ties in list order. */
static int by_latest_end(const void *a, const void *b) {
    const Release *x = a, *y = b;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* release_run(profiles, ends, aggregate, blocks, block_of, windows): what each (held,
 * start, end) of the list ``windows`` holds given back (book_nodes) and one of its end
 * taken out of ``ends``, as NodePlan.release does (start < end each). The windows go
 * latest end first: each give-back then merges steps, and takes its end out of the
 * list, near the tail, so the memory moved behind them is short; in the order QoPS
 * takes jobs out (by start, or as they come) most of the aggregate's steps and of the
 * list moved for each job. The same plan in any order (the profiles keep no two equal
 * steps side by side; the list is sorted). */
static PyObject *release_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("release_run", nargs, 6, 6) < 0) return NULL;
    PyObject *ends = args[1], *windows = args[5];
    if (!PyList_Check(ends) || !PyList_Check(windows)) {
        PyErr_SetString(PyExc_TypeError, "release_run() takes a list of ends and of windows");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(windows);
    Release *order = PyMem_Calloc((size_t)n + 1, sizeof(Release));
    PyObject *given = PyLong_FromLong(1);
    if (order == NULL || given == NULL) {
        PyMem_Free(order);
        Py_XDECREF(given);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *window = PyList_GET_ITEM(windows, i);
        if (!PyTuple_Check(window) || PyTuple_GET_SIZE(window) != 3) {
            PyErr_SetString(PyExc_TypeError, "a window of release_run() is (held, start, end)");
            goto failed;
        }
        if (as_time(PyTuple_GET_ITEM(window, 2), &order[i].end) < 0) goto failed;
        order[i].index = i;
    }
    qsort(order, (size_t)n, sizeof(Release), by_latest_end);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *window = PyList_GET_ITEM(windows, order[i].index);
        PyObject *booking[8] = {args[0], PyTuple_GET_ITEM(window, 0), PyTuple_GET_ITEM(window, 1),
                                PyTuple_GET_ITEM(window, 2), given, args[2], args[3], args[4]};
        PyObject *booked = book_nodes(module, booking, 8);
        if (booked == NULL) goto failed;
        Py_DECREF(booked);
        int64_t time = order[i].end;
        Py_ssize_t at = ends_from(ends, time, 0); /* bisect_left */
        if (at < 0) goto failed;
        if (at < PyList_GET_SIZE(ends)) {
            int64_t there = end_at(ends, at);
            if (there == -1 && PyErr_Occurred()) goto failed;
            if (there == time && PySequence_DelItem(ends, at) < 0) goto failed;
        }
    }
    PyMem_Free(order);
    Py_DECREF(given);
    Py_RETURN_NONE;
failed:
    PyMem_Free(order);
    Py_DECREF(given);
    return NULL;
}

#endif
