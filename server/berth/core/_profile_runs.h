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

/* place_run(profiles, ends, aggregate, blocks, block_of, block_steps, jobs): each job of
 * the list ``jobs``, a tuple (demand, total, count, nodes, duration, after, deadline,
 * able, blocks_of_able, summed), placed in turn at its earliest start from ``after`` on
 * (node_search.earliest_shared, with no limit) and booked there on the nodes, the
 * aggregate and the blocks' sums (book_nodes), its end put in ``ends``. Stops after the
 * first job that completes after its deadline, or at a job with no start (None in the
 * answer). The answer: per job placed, (start, placement, held). */
static PyObject *place_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("place_run", nargs, 7, 7) < 0) return NULL;
    PyObject *profiles = args[0], *ends = args[1], *aggregate = args[2], *blocks = args[3],
             *block_of = args[4], *block_steps = args[5], *jobs = args[6];
    if (!PyList_Check(ends) || !PyList_Check(jobs)) {
        PyErr_SetString(PyExc_TypeError, "place_run() takes a list of ends and of jobs");
        return NULL;
    }
    PyObject *placed = PyList_New(0), *taken = PyLong_FromLong(-1);
    if (placed == NULL || taken == NULL) goto failed;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(jobs); i++) {
        PyObject *job = PyList_GET_ITEM(jobs, i);
        if (!PyTuple_Check(job) || PyTuple_GET_SIZE(job) != 10) {
            PyErr_SetString(PyExc_TypeError, "a job of place_run() is a tuple of ten");
            goto failed;
        }
        PyObject *demand = PyTuple_GET_ITEM(job, 0), *duration = PyTuple_GET_ITEM(job, 4);
        int64_t span, deadline;
        if (as_time(duration, &span) < 0 || as_time(PyTuple_GET_ITEM(job, 6), &deadline) < 0)
            goto failed;
        PyObject *search[15] = {profiles, PyTuple_GET_ITEM(job, 7), PyTuple_GET_ITEM(job, 8),
                                PyTuple_GET_ITEM(job, 9), ends, demand,
                                PyTuple_GET_ITEM(job, 1), PyTuple_GET_ITEM(job, 2),
                                PyTuple_GET_ITEM(job, 3), duration, PyTuple_GET_ITEM(job, 5),
                                Py_None, Py_None, Py_None, block_steps};
        PyObject *found = search_shared(module, search, 15);
        if (found == NULL) goto failed;
        if (found == Py_None) { /* (the caller says why none is an error) */
            int appended = PyList_Append(placed, found);
            Py_DECREF(found);
            if (appended < 0) goto failed;
            break;
        }
        PyObject *start = PyTuple_GET_ITEM(found, 0), *placement = PyTuple_GET_ITEM(found, 1);
        int64_t at;
        if (as_time(start, &at) < 0) {
            Py_DECREF(found);
            goto failed;
        }
        PyObject *pair[2] = {placement, demand};
        PyObject *held = held_of(module, pair, 2);
        PyObject *end = held == NULL ? NULL : PyLong_FromLongLong(plus(at, span));
        PyObject *booking[8] = {profiles, held, start, end, taken, aggregate, blocks, block_of};
        PyObject *booked = end == NULL ? NULL : book_nodes(module, booking, 8);
        Py_XDECREF(booked);
        Py_ssize_t where = booked == NULL ? -1 : ends_after(ends, plus(at, span));
        PyObject *entry = where < 0 || PyList_Insert(ends, where, end) < 0
                              ? NULL
                              : PyTuple_Pack(3, start, placement, held);
        int appended = entry == NULL ? -1 : PyList_Append(placed, entry);
        Py_XDECREF(entry);
        Py_XDECREF(end);
        Py_XDECREF(held);
        Py_DECREF(found);
        if (appended < 0) goto failed;
        if (plus(at, span) > deadline) break; /* late: the caller takes it from here */
    }
    Py_DECREF(taken);
    return placed;
failed:
    Py_XDECREF(placed);
    Py_XDECREF(taken);
    return NULL;
}

/* release_run(profiles, ends, aggregate, blocks, block_of, windows): what each (held,
 * start, end) of the list ``windows`` holds given back (book_nodes) and one of its end
 * taken out of ``ends``, as NodePlan.release does (start < end each). */
static PyObject *release_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("release_run", nargs, 6, 6) < 0) return NULL;
    PyObject *ends = args[1], *windows = args[5];
    if (!PyList_Check(ends) || !PyList_Check(windows)) {
        PyErr_SetString(PyExc_TypeError, "release_run() takes a list of ends and of windows");
        return NULL;
    }
    PyObject *given = PyLong_FromLong(1);
    if (given == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(windows); i++) {
        PyObject *window = PyList_GET_ITEM(windows, i);
        if (!PyTuple_Check(window) || PyTuple_GET_SIZE(window) != 3) {
            PyErr_SetString(PyExc_TypeError, "a window of release_run() is (held, start, end)");
            goto failed;
        }
        PyObject *end = PyTuple_GET_ITEM(window, 2);
        PyObject *booking[8] = {args[0], PyTuple_GET_ITEM(window, 0), PyTuple_GET_ITEM(window, 1),
                                end, given, args[2], args[3], args[4]};
        PyObject *booked = book_nodes(module, booking, 8);
        if (booked == NULL) goto failed;
        Py_DECREF(booked);
        int64_t time;
        if (as_time(end, &time) < 0) goto failed;
        Py_ssize_t at = ends_from(ends, time, 0); /* bisect_left */
        if (at < 0) goto failed;
        if (at < PyList_GET_SIZE(ends)) {
            int64_t there = end_at(ends, at);
            if (there == -1 && PyErr_Occurred()) goto failed;
            if (there == time && PySequence_DelItem(ends, at) < 0) goto failed;
        }
    }
    Py_DECREF(given);
    Py_RETURN_NONE;
failed:
    Py_DECREF(given);
    return NULL;
}

#endif
