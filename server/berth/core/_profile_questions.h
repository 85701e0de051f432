/* The questions a C profile answers as Python methods (berth.core.profile.Profile's):
 * each parses its arguments, asks the steps and walks of _profile_steps.h, and builds
 * the Python answer. The type, its storage and its changes are _profile_native.c.
 * Pure: no I/O.
 */
#ifndef BERTH_PROFILE_QUESTIONS_H
#define BERTH_PROFILE_QUESTIONS_H

#include "_profile_steps.h"

/* A method's arguments: ``least`` to ``most`` of them, the first ``least`` from
 * ``args[skip]`` on read as times into ``times``, in order; -1 on error. */
static int times_of(const char *name, PyObject *const *args, Py_ssize_t nargs, Py_ssize_t least,
                    Py_ssize_t most, Py_ssize_t skip, int64_t *times) {
    if (check_args(name, nargs, least, most) < 0) return -1;
    for (Py_ssize_t i = skip; i < least; i++)
        if (as_time(args[i], &times[i - skip]) < 0) return -1;
    return 0;
}

/* The same for a method whose first argument is a demand (a packed vector), then times:
 * the demand, or NULL on error. */
static const int64_t *demand_and_times(NativeProfile *self, const char *name,
                                       PyObject *const *args, Py_ssize_t nargs,
                                       Py_ssize_t least, Py_ssize_t most, int64_t *times) {
    if (times_of(name, args, nargs, least, most, 1, times) < 0) return NULL;
    return demand_of(args[0], self->k);
}

static PyObject *profile_breakpoints(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t t[2];
    if (times_of("breakpoints", args, nargs, 2, 2, 0, t) < 0) return NULL;
    Py_ssize_t first = at_time(self, t[0], 0), last = at_time(self, t[1], 0);
    if (last < first) last = first;
    PyObject *times = PyList_New(last - first);
    if (times == NULL) return NULL;
    for (Py_ssize_t i = first; i < last; i++) {
        PyObject *t = PyLong_FromLongLong(self->times[i]);
        if (t == NULL) {
            Py_DECREF(times);
            return NULL;
        }
        PyList_SET_ITEM(times, i - first, t);
    }
    return times;
}

static PyObject *profile_free_at(NativeProfile *self, PyObject *arg) {
    int64_t time;
    if (as_time(arg, &time) < 0) return NULL;
    return pack(STEP(self, step_of(self, time)), self->k);
}

static PyObject *profile_min_free(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t t[2];
    if (times_of("min_free", args, nargs, 2, 2, 0, t) < 0) return NULL;
    Py_ssize_t first = step_of(self, t[0]), last = at_time(self, t[1], 0);
    if (last < first) last = first;
    PyObject *frees = PyList_New(last - first);
    if (frees == NULL) return NULL;
    for (Py_ssize_t i = first; i < last; i++) {
        PyObject *free = pack(STEP(self, i), self->k);
        if (free == NULL) {
            Py_DECREF(frees);
            return NULL;
        }
        PyList_SET_ITEM(frees, i - first, free);
    }
    return frees;
}

static PyObject *profile_copies_during(NativeProfile *self, PyObject *const *args,
                                       Py_ssize_t nargs) {
    int64_t t[3]; /* start, end, most */
    const int64_t *demand = demand_and_times(self, "copies_during", args, nargs, 4, 4, t);
    if (demand == NULL) return NULL;
    Py_ssize_t empty;
    Py_ssize_t first = step_of(self, t[0]);
    Py_ssize_t last = at_time(self, t[1], 0);
    return PyLong_FromLongLong(copies_in_steps(self, demand, first, last, t[2], &empty));
}

static PyObject *profile_copies_until(NativeProfile *self, PyObject *const *args,
                                      Py_ssize_t nargs) {
    int64_t t[3], limit, held, until; /* start, duration, most */
    int given;
    const int64_t *demand = demand_and_times(self, "copies_until", args, nargs, 4, 5, t);
    if (demand == NULL ||
        as_optional_time(nargs > 4 ? args[4] : Py_None, NEVER, &limit, &given) < 0)
        return NULL;
    copies_until(self, demand, t[0], t[1], t[2], limit, &held, &until);
    return Py_BuildValue("(LL)", (long long)held, (long long)until);
}

/* slots_at's answers (copies, since, until) for a call of ``least`` to ``most_args``
 * arguments: the demand first, the start second, the most at ``most_at``; -1 on error. */
static int slots_asked(NativeProfile *self, const char *name, PyObject *const *args,
                       Py_ssize_t nargs, Py_ssize_t least, Py_ssize_t most_args,
                       Py_ssize_t most_at, int64_t *out) {
    int64_t t[3]; /* start, (duration,) most */
    const int64_t *demand = demand_and_times(self, name, args, nargs, least, most_args, t);
    if (demand == NULL) return -1;
    slots_at(self, demand, t[0], t[most_at - 1], &out[0], &out[1], &out[2]);
    return 0;
}

static PyObject *profile_slots_at(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t out[3];
    if (slots_asked(self, "slots_at", args, nargs, 3, 3, 2, out) < 0) return NULL;
    return Py_BuildValue("(LLL)", (long long)out[0], (long long)out[1], (long long)out[2]);
}

/* (copies_from takes copies_until's arguments: duration and limit are not read.) */
static PyObject *profile_copies_from(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t out[3];
    if (slots_asked(self, "copies_from", args, nargs, 4, 5, 3, out) < 0) return NULL;
    return Py_BuildValue("(LL)", (long long)out[0], (long long)out[2]);
}

static PyObject *profile_earliest_start(NativeProfile *self, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"demand", "duration", "after", "limit", "before", NULL};
    PyObject *packed, *limit_arg = Py_None, *before_arg = Py_None;
    long long duration, after;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OLL|OO", keywords, &packed, &duration, &after,
                                     &limit_arg, &before_arg))
        return NULL;
    const int64_t *demand = demand_of(packed, self->k);
    int64_t limit, before, found;
    int has_limit, has_before;
    if (demand == NULL || as_optional_time(limit_arg, 0, &limit, &has_limit) < 0 ||
        as_optional_time(before_arg, 0, &before, &has_before) < 0)
        return NULL;
    if (!earliest(self, demand, duration, after, limit, has_limit, before, has_before, &found))
        Py_RETURN_NONE;
    return PyLong_FromLongLong(found);
}

static PyObject *profile_earliest_or_bound(NativeProfile *self, PyObject *const *args,
                                           Py_ssize_t nargs) {
    int64_t t[3]; /* duration, after, steps */
    const int64_t *demand = demand_and_times(self, "earliest_or_bound", args, nargs, 4, 4, t);
    if (demand == NULL) return NULL;
    return PyLong_FromLongLong(earliest_or_bound(self, demand, t[0], t[1], t[2]));
}

static PyObject *profile_earliest_growing(NativeProfile *self, PyObject *const *args,
                                          Py_ssize_t nargs) {
    int64_t t[2], limit; /* duration (not read), after */
    int has_limit;
    const int64_t *demand = demand_and_times(self, "earliest_growing", args, nargs, 3, 4, t);
    if (demand == NULL ||
        as_optional_time(nargs > 3 ? args[3] : Py_None, 0, &limit, &has_limit) < 0)
        return NULL;
    int64_t after = t[1];
    if (has_limit && limit <= after) Py_RETURN_NONE;
    Py_ssize_t stop = has_limit ? at_time(self, limit, 0) : self->n;
    Py_ssize_t first = step_of(self, after);
    /* bisect_left over range(first, stop) with the fit test as key, probe for probe. */
    Py_ssize_t lo = 0, hi = stop - first;
    if (hi < 0) hi = 0;
    Py_ssize_t size = hi;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (!fits(STEP(self, first + mid), demand, self->k)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == size) Py_RETURN_NONE;
    int64_t start = self->times[first + lo];
    return PyLong_FromLongLong(start > after ? start : after);
}

static PyObject *profile_first_fit(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t after;
    const int64_t *demand = demand_and_times(self, "first_fit", args, nargs, 2, 2, &after);
    if (demand == NULL) return NULL;
    Py_ssize_t i = room_from(self, demand, step_of(self, after));
    if (i == self->n) Py_RETURN_NONE;
    return PyLong_FromLongLong(self->times[i] > after ? self->times[i] : after);
}

static PyObject *profile_fits_during(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t t[2]; /* start, duration */
    const int64_t *demand = demand_and_times(self, "fits_during", args, nargs, 3, 3, t);
    if (demand == NULL) return NULL;
    return PyBool_FromLong(fits_during(self, demand, t[0], t[1]));
}

#endif
