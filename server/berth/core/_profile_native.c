/* The availability profile (berth.core.profile.Profile) in C: the same step function,
 * the same methods and the same answers, with each step's free resources stored as one
 * 64-bit integer per resource instead of a packed Python int.
 *
 * Why: a node plan's searches are many short walks over profiles that change between
 * most questions (docs/performance.md, sessions 15-20); in Python each step read costs
 * a bytecode loop turn, here a few machine instructions. The Python class stays the
 * reference: tests/property/test_native_profile.py drives both with the same operations
 * and compares every answer. The one deliberate difference: where the Python walks to
 * a run of room stop after a few dozen steps and answer a bound (a later start at which
 * the answer may change), these walk on and answer exactly; every caller treats that
 * time as "ask again from here", so searches find the same starts and placements.
 *
 * This file is the Python type (storage, copies, pickling, changes, the method
 * tables); its questions are _profile_questions.h; the steps and the walks over them
 * are _profile_steps.h, the packed vectors _profile_packed.h, the
 * node search over many such profiles (the module's earliest_shared) _profile_search.h
 * with _profile_due.h, the booking of a placement over them (book_nodes) and the
 * question which have a past to forget (with_past) _profile_books.h, runs of placements
 * and give-backs looped over those (place_run, release_run) _profile_runs.h.
 * Pure: no clock, no I/O.
 */
#include "_profile_steps.h"

static PyTypeObject NativeProfileType;

#include "_profile_questions.h"
#include "_profile_search.h"
#include "_profile_books.h"
#include "_profile_runs.h"

/* ---- the type ---------------------------------------------------------------------- */

static int fields_of(PyObject *guard) {
    PyObject *length = PyObject_CallMethod(guard, "bit_length", NULL);
    if (length == NULL) return -1;
    long long bits = PyLong_AsLongLong(length);
    Py_DECREF(length);
    if (bits <= 0 || bits % FIELD_BITS != 0 || bits / FIELD_BITS > MAX_FIELDS) return -1;
    return (int)(bits / FIELD_BITS);
}

static int setup(NativeProfile *p, PyObject *capacity, PyObject *guard, int64_t origin) {
    if (!PyLong_Check(capacity) || !PyLong_Check(guard)) {
        PyErr_SetString(PyExc_TypeError, "capacity and guard must be ints");
        return -1;
    }
    int k = fields_of(guard);
    if (k < 0) {
        if (PyErr_Occurred()) return -1;
        PyErr_SetString(PyExc_ValueError, "guard must have one bit per field of 50 bits");
        return -1;
    }
    p->k = k;
    Py_INCREF(capacity);
    Py_XSETREF(p->capacity, capacity);
    Py_INCREF(guard);
    Py_XSETREF(p->guard, guard);
    p->n = 0;
    if (grow(p, 4) < 0) return -1;
    p->times[0] = origin;
    if (non_negative(capacity) < 0 || unpack_into(capacity, k, STEP(p, 0)) < 0) return -1;
    p->n = 1;
    return 0;
}

static int profile_init(NativeProfile *self, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"capacity", "guard", "origin", NULL};
    PyObject *capacity, *guard;
    long long origin = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|L", keywords, &capacity, &guard, &origin))
        return -1;
    return setup(self, capacity, guard, (int64_t)origin);
}

static void profile_dealloc(NativeProfile *self) {
    Py_XDECREF(self->capacity);
    Py_XDECREF(self->guard);
    PyMem_Free(self->times);
    PyMem_Free(self->free);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static NativeProfile *new_profile(PyTypeObject *type) {
    NativeProfile *p = (NativeProfile *)type->tp_alloc(type, 0);
    return p;
}

static PyObject *profile_copy(NativeProfile *self, PyObject *unused) {
    NativeProfile *twin = new_profile(Py_TYPE(self));
    if (twin == NULL) return NULL;
    twin->k = self->k;
    Py_INCREF(self->capacity);
    twin->capacity = self->capacity;
    Py_INCREF(self->guard);
    twin->guard = self->guard;
    if (grow(twin, self->n) < 0) {
        Py_DECREF(twin);
        return NULL;
    }
    memcpy(twin->times, self->times, sizeof(int64_t) * (size_t)self->n);
    memcpy(twin->free, self->free, sizeof(int64_t) * (size_t)(self->n * self->k));
    twin->n = self->n;
    return (PyObject *)twin;
}

static PyObject *profile_deepcopy(NativeProfile *self, PyObject *memo) {
    return profile_copy(self, NULL);
}

static Py_ssize_t profile_len(NativeProfile *self) { return self->n; }

static PyObject *profile_steps(NativeProfile *self, PyObject *unused) {
    PyObject *steps = PyList_New(self->n);
    if (steps == NULL) return NULL;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        PyObject *free = pack(STEP(self, i), self->k);
        if (free == NULL) {
            Py_DECREF(steps);
            return NULL;
        }
        PyObject *pair = Py_BuildValue("(LN)", (long long)self->times[i], free);
        if (pair == NULL) {
            Py_DECREF(steps);
            return NULL;
        }
        PyList_SET_ITEM(steps, i, pair);
    }
    return steps;
}

/* from_steps(capacity, guard, steps): a profile with these (time, packed free) steps. */
static PyObject *profile_from_steps(PyObject *type, PyObject *args) {
    PyObject *capacity, *guard, *steps;
    if (!PyArg_ParseTuple(args, "OOO", &capacity, &guard, &steps)) return NULL;
    PyObject *seq = PySequence_Fast(steps, "steps must be a sequence of (time, free) pairs");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n == 0) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "a profile has at least one step");
        return NULL;
    }
    NativeProfile *p = new_profile((PyTypeObject *)type);
    if (p == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    if (setup(p, capacity, guard, 0) < 0 || grow(p, n) < 0) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long time;
        PyObject *free;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "LO", &time, &free)) goto fail;
        if (i > 0 && time <= p->times[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "step times must increase");
            goto fail;
        }
        p->times[i] = time;
        if (non_negative(free) < 0 || unpack_into(free, p->k, STEP(p, i)) < 0) goto fail;
    }
    p->n = n;
    Py_DECREF(seq);
    return (PyObject *)p;
fail:
    Py_DECREF(seq);
    Py_DECREF(p);
    return NULL;
}

static PyObject *profile_reduce(NativeProfile *self, PyObject *unused) {
    PyObject *steps = profile_steps(self, NULL);
    if (steps == NULL) return NULL;
    PyObject *from_steps = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_steps");
    if (from_steps == NULL) {
        Py_DECREF(steps);
        return NULL;
    }
    return Py_BuildValue("(N(OON))", from_steps, self->capacity, self->guard, steps);
}

static PyObject *profile_add(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, end;
    int sign;
    if (check_args("add", nargs, 3, 3) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &end) < 0)
        return NULL;
    const int64_t *amount = change_of(args[2], self->k, &sign);
    if (amount == NULL || add(self, start, end, amount, sign) < 0) return NULL;
    Py_RETURN_NONE;
}

/* reserve (``sign`` -1) or release (1): ``demand`` during [start, start + duration). */
static PyObject *book(NativeProfile *self, const char *name, PyObject *const *args,
                      Py_ssize_t nargs, int sign) {
    int64_t start, duration;
    if (check_args(name, nargs, 3, 3) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &duration) < 0)
        return NULL;
    const int64_t *demand = demand_of(args[2], self->k);
    if (demand == NULL || add(self, start, start + duration, demand, sign) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *profile_reserve(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    return book(self, "reserve", args, nargs, -1);
}

static PyObject *profile_release(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    return book(self, "release", args, nargs, 1);
}

static PyObject *profile_forget_before(NativeProfile *self, PyObject *arg) {
    int64_t now;
    if (as_time(arg, &now) < 0) return NULL;
    Py_ssize_t i = after_time(self, now, 0) - 1;
    if (i > 0) {
        int k = self->k;
        memmove(self->times, self->times + i, sizeof(int64_t) * (size_t)(self->n - i));
        memmove(self->free, STEP(self, i), sizeof(int64_t) * (size_t)((self->n - i) * k));
        self->n -= i;
    }
    Py_RETURN_NONE;
}

static PyObject *profile_has_past(NativeProfile *self, PyObject *arg) {
    int64_t now;
    if (as_time(arg, &now) < 0) return NULL;
    return PyBool_FromLong(has_past(self, now));
}

static PyObject *get_capacity(NativeProfile *self, void *closure) {
    Py_INCREF(self->capacity);
    return self->capacity;
}

static PyObject *get_guard(NativeProfile *self, void *closure) {
    Py_INCREF(self->guard);
    return self->guard;
}

static PyGetSetDef profile_getset[] = {
    {"capacity", (getter)get_capacity, NULL, "the packed capacity", NULL},
    {"guard", (getter)get_guard, NULL, "the packed guard bits", NULL},
    {NULL},
};

#define FAST(name, doc) {#name, (PyCFunction)(void (*)(void))profile_##name, METH_FASTCALL, doc}

static PyMethodDef profile_methods[] = {
    {"copy", (PyCFunction)profile_copy, METH_NOARGS, "An independent copy."},
    {"__copy__", (PyCFunction)profile_copy, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)profile_deepcopy, METH_O, NULL},
    {"__reduce__", (PyCFunction)profile_reduce, METH_NOARGS, NULL},
    {"steps", (PyCFunction)profile_steps, METH_NOARGS, "(time, packed free) pairs."},
    {"from_steps", (PyCFunction)profile_from_steps, METH_VARARGS | METH_CLASS,
     "A profile with the given (time, packed free) steps."},
    FAST(breakpoints, "Times in [start, end) where the free vector changes."),
    {"free_at", (PyCFunction)profile_free_at, METH_O, "The packed vector free at a time."},
    FAST(min_free, "The packed free vectors of every step overlapping [start, end)."),
    FAST(copies_during, "Copies of a demand fitting in every step of [start, end)."),
    FAST(copies_until, "copies_during over a window, and when the answer may change."),
    FAST(copies_from, "copies_until for a profile whose room only grows."),
    FAST(slots_at, "(copies, since, until) at an instant."),
    {"earliest_start", (PyCFunction)(void (*)(void))profile_earliest_start,
     METH_VARARGS | METH_KEYWORDS, "The earliest start of a demand for a duration."},
    FAST(earliest_or_bound, "earliest_start, or a bound past a number of steps."),
    FAST(earliest_growing, "earliest_start for a profile whose room only grows."),
    FAST(first_fit, "The earliest time a demand fits at all."),
    FAST(fits_during, "Whether a demand fits during a window."),
    FAST(reserve, "Take a demand during [start, start + duration)."),
    FAST(release, "Give back a demand during [start, start + duration)."),
    FAST(add, "Add a packed change during [start, end)."),
    {"forget_before", (PyCFunction)profile_forget_before, METH_O,
     "Drop steps that ended at or before now."},
    {"has_past", (PyCFunction)profile_has_past, METH_O,
     "Whether a step ended at or before now (forget_before would drop it)."},
    {NULL},
};

static PySequenceMethods profile_as_sequence = {
    .sq_length = (lenfunc)profile_len,
};

static PyTypeObject NativeProfileType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "berth.core._profile_native.Profile",
    .tp_doc = "Free resources over time for one cluster (the C profile).",
    .tp_basicsize = sizeof(NativeProfile),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)profile_init,
    .tp_dealloc = (destructor)profile_dealloc,
    .tp_methods = profile_methods,
    .tp_getset = profile_getset,
    .tp_as_sequence = &profile_as_sequence,
};

static PyMethodDef module_functions[] = {
    {"earliest_shared", (PyCFunction)(void (*)(void))search_shared, METH_FASTCALL,
     "berth.core.node_search.earliest_shared over C profiles."},
    {"with_past", (PyCFunction)(void (*)(void))profiles_with_past, METH_FASTCALL,
     "The places of the profiles with a step to drop before now."},
    {"book_nodes", (PyCFunction)(void (*)(void))book_nodes, METH_FASTCALL,
     "A placement booked on C profiles: the nodes, the aggregate, the blocks' sums."},
    {"held_of", (PyCFunction)(void (*)(void))held_of, METH_FASTCALL,
     "What a placement of slots holds per node: {node: demand * slots}."},
    {"place_run", (PyCFunction)(void (*)(void))place_run, METH_FASTCALL,
     "Jobs placed in turn at their earliest starts and booked, until one is late."},
    {"release_run", (PyCFunction)(void (*)(void))release_run, METH_FASTCALL,
     "Reservations given back in turn: their nodes, sums and ends."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "berth.core._profile_native",
    .m_doc = "The availability profile in C (see berth.core.profile) and the node search.",
    .m_size = -1,
    .m_methods = module_functions,
};

PyMODINIT_FUNC PyInit__profile_native(void) {
    if (packed_ready() < 0) return NULL;
    if (PyType_Ready(&NativeProfileType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&NativeProfileType);
    if (PyModule_AddObject(m, "Profile", (PyObject *)&NativeProfileType) < 0) {
        Py_DECREF(&NativeProfileType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
