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
 * Packed vectors (berth.core.resources) arrive as Python ints: FIELD_BITS bits per
 * resource, the top one a guard bit. They are unpacked once and remembered (a search
 * asks hundreds of profiles about one demand). Pure: no clock, no I/O.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FIELD_BITS 50
#define MAX_FIELDS 32
#define NEVER ((int64_t)1 << 62)

typedef struct {
    PyObject_HEAD
    PyObject *capacity; /* the packed capacity, as given */
    PyObject *guard;    /* the packed guard bits, as given */
    int k;              /* resources (fields) */
    Py_ssize_t n;       /* steps */
    Py_ssize_t room;    /* steps allocated */
    int64_t *times;     /* n breakpoints, strictly increasing */
    int64_t *free;      /* n * k amounts: step i, resource r at i * k + r */
} NativeProfile;

static PyTypeObject NativeProfileType;

/* ---- packed vectors ---------------------------------------------------------------- */

static PyObject *field_mask;  /* (1 << (FIELD_BITS - 1)) - 1 */
static PyObject *field_shift; /* FIELD_BITS */

/* A demand's unpacked amounts, remembered by value for the next questions. */
typedef struct {
    PyObject *packed; /* a strong reference, or NULL */
    int k;
    int64_t amount[MAX_FIELDS];
} Unpacked;

#define REMEMBERED 8
static Unpacked remembered[REMEMBERED];
static int next_remembered;

/* Unpack a non-negative packed int into k amounts; -1 with an exception set on error. */
static int unpack_into(PyObject *packed, int k, int64_t *out) {
    PyObject *rest = packed;
    Py_INCREF(rest);
    for (int r = 0; r < k; r++) {
        PyObject *field = PyNumber_And(rest, field_mask);
        if (field == NULL) {
            Py_DECREF(rest);
            return -1;
        }
        out[r] = PyLong_AsLongLong(field);
        Py_DECREF(field);
        if (out[r] == -1 && PyErr_Occurred()) {
            Py_DECREF(rest);
            return -1;
        }
        PyObject *shifted = PyNumber_Rshift(rest, field_shift);
        Py_DECREF(rest);
        if (shifted == NULL) return -1;
        rest = shifted;
    }
    int extra = PyObject_IsTrue(rest);
    Py_DECREF(rest);
    if (extra < 0) return -1;
    if (extra) {
        PyErr_SetString(PyExc_ValueError, "a packed vector has more fields than the profile");
        return -1;
    }
    return 0;
}

static PyObject *zero;

/* Whether a packed int is negative: -1 with ValueError set (or another error), else 0. */
static int non_negative(PyObject *packed) {
    int negative = PyObject_RichCompareBool(packed, zero, Py_LT);
    if (negative < 0) return -1;
    if (negative) {
        PyErr_SetString(PyExc_ValueError, "a packed vector must not be negative here");
        return -1;
    }
    return 0;
}

/* The amounts of a packed demand (cached); NULL with an exception set on error. */
static const int64_t *demand_of(PyObject *packed, int k) {
    if (!PyLong_Check(packed)) {
        PyErr_SetString(PyExc_TypeError, "a packed vector must be an int");
        return NULL;
    }
    for (int i = 0; i < REMEMBERED; i++) {
        Unpacked *u = &remembered[i];
        if (u->packed == NULL || u->k != k) continue;
        if (u->packed == packed) return u->amount;
        int same = PyObject_RichCompareBool(u->packed, packed, Py_EQ);
        if (same < 0) return NULL;
        if (same) return u->amount;
    }
    int64_t amount[MAX_FIELDS];
    if (non_negative(packed) < 0) return NULL;
    if (unpack_into(packed, k, amount) < 0) return NULL;
    Unpacked *u = &remembered[next_remembered];
    next_remembered = (next_remembered + 1) % REMEMBERED;
    Py_XDECREF(u->packed);
    Py_INCREF(packed);
    u->packed = packed;
    u->k = k;
    memcpy(u->amount, amount, sizeof(int64_t) * (size_t)k);
    return u->amount;
}

/* A packed int from k amounts (each below 2 ** (FIELD_BITS - 1)). */
static PyObject *pack(const int64_t *amount, int k) {
    PyObject *packed = PyLong_FromLong(0);
    if (packed == NULL) return NULL;
    for (int r = k - 1; r >= 0; r--) {
        PyObject *shifted = PyNumber_Lshift(packed, field_shift);
        Py_DECREF(packed);
        if (shifted == NULL) return NULL;
        PyObject *field = PyLong_FromLongLong(amount[r]);
        if (field == NULL) {
            Py_DECREF(shifted);
            return NULL;
        }
        packed = PyNumber_Or(shifted, field);
        Py_DECREF(shifted);
        Py_DECREF(field);
        if (packed == NULL) return NULL;
    }
    return packed;
}

/* ---- steps ------------------------------------------------------------------------- */

#define STEP(p, i) ((p)->free + (Py_ssize_t)(i) * (p)->k)

static inline int fits(const int64_t *step, const int64_t *demand, int k) {
    for (int r = 0; r < k; r++)
        if (step[r] < demand[r]) return 0;
    return 1;
}

/* Whether ``times`` copies of ``demand`` fit in ``step``. */
static inline int fits_times(const int64_t *step, const int64_t *demand, int k, int64_t times) {
    for (int r = 0; r < k; r++)
        if ((__int128)step[r] < (__int128)demand[r] * times) return 0;
    return 1;
}

/* Copies of ``demand`` in ``step``, at most ``most``. */
static inline int64_t copies(const int64_t *step, const int64_t *demand, int k, int64_t most) {
    int64_t least = most;
    for (int r = 0; r < k; r++) {
        if (demand[r] <= 0) continue;
        int64_t room = step[r] >= 0 ? step[r] / demand[r] : -1;
        if (room < least) least = room;
    }
    return least < 0 ? 0 : least;
}

/* First index with times[index] > time (bisect_right), from ``lo``. */
static inline Py_ssize_t after_time(const NativeProfile *p, int64_t time, Py_ssize_t lo) {
    Py_ssize_t hi = p->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (time < p->times[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* First index with times[index] >= time (bisect_left), from ``lo``. */
static inline Py_ssize_t at_time(const NativeProfile *p, int64_t time, Py_ssize_t lo) {
    Py_ssize_t hi = p->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (p->times[mid] < time) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The step holding ``time`` (the first step for a time before it). */
static inline Py_ssize_t step_of(const NativeProfile *p, int64_t time) {
    Py_ssize_t at = after_time(p, time, 0) - 1;
    return at < 0 ? 0 : at;
}

static inline int64_t plus(int64_t a, int64_t b) {
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return a > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

static int grow(NativeProfile *p, Py_ssize_t need) {
    if (need <= p->room) return 0;
    Py_ssize_t room = p->room ? p->room : 4;
    while (room < need) room *= 2;
    int64_t *times = PyMem_Realloc(p->times, sizeof(int64_t) * (size_t)room);
    if (times == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    p->times = times;
    int64_t *free = PyMem_Realloc(p->free, sizeof(int64_t) * (size_t)(room * p->k));
    if (free == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    p->free = free;
    p->room = room;
    return 0;
}

/* Insert a step at ``index`` beginning at ``time``, a copy of the step before it. */
static int insert_step(NativeProfile *p, Py_ssize_t index, int64_t time) {
    if (index == 0) {
        PyErr_SetString(PyExc_ValueError, "a change must end after it starts");
        return -1;
    }
    if (grow(p, p->n + 1) < 0) return -1;
    int k = p->k;
    memmove(p->times + index + 1, p->times + index, sizeof(int64_t) * (size_t)(p->n - index));
    memmove(STEP(p, index + 1), STEP(p, index), sizeof(int64_t) * (size_t)((p->n - index) * k));
    p->times[index] = time;
    memcpy(STEP(p, index), STEP(p, index - 1), sizeof(int64_t) * (size_t)k);
    p->n++;
    return 0;
}

static void delete_step(NativeProfile *p, Py_ssize_t index) {
    int k = p->k;
    memmove(p->times + index, p->times + index + 1,
            sizeof(int64_t) * (size_t)(p->n - index - 1));
    memmove(STEP(p, index), STEP(p, index + 1), sizeof(int64_t) * (size_t)((p->n - index - 1) * k));
    p->n--;
}

static inline int same_step(const NativeProfile *p, Py_ssize_t a, Py_ssize_t b) {
    return memcmp(STEP(p, a), STEP(p, b), sizeof(int64_t) * (size_t)p->k) == 0;
}

/* ---- the walks --------------------------------------------------------------------- */

/* The first step at or after ``index`` with room for ``demand`` (n if none). */
static inline Py_ssize_t room_from(const NativeProfile *p, const int64_t *demand, Py_ssize_t index) {
    int k = p->k;
    while (index < p->n && !fits(STEP(p, index), demand, k)) index++;
    return index;
}

/* The start of the first step at or after ``index`` (a step with room, or n) that starts
 * a run of room at least ``duration`` long; the walk stops at the first step from
 * ``limit`` on and answers its time. NEVER past the last step. */
static int64_t long_run(const NativeProfile *p, const int64_t *demand, Py_ssize_t index,
                        int64_t duration, int64_t limit) {
    Py_ssize_t n = p->n;
    int k = p->k;
    while (index < n && p->times[index] < limit) {
        int64_t reach = plus(p->times[index], duration);
        Py_ssize_t end = index + 1;
        while (end < n && p->times[end] < reach && fits(STEP(p, end), demand, k)) end++;
        if (end == n || p->times[end] >= reach) break;
        index = end + 1;
        while (index < n && !fits(STEP(p, index), demand, k)) index++;
    }
    return index < n ? p->times[index] : NEVER;
}

/* Copies of ``demand`` (at most ``most``) in steps first .. last - 1, and the index of
 * the first step with room for none (then 0 copies), or -1. */
static inline int64_t copies_in_steps(const NativeProfile *p, const int64_t *demand,
                                      Py_ssize_t first, Py_ssize_t last, int64_t most,
                                      Py_ssize_t *empty) {
    int k = p->k;
    int64_t held = most;
    for (Py_ssize_t i = first; i < last; i++) {
        const int64_t *step = STEP(p, i);
        if (!fits_times(step, demand, k, held)) {
            held = copies(step, demand, k, held);
            if (held == 0) {
                *empty = i;
                return 0;
            }
        }
    }
    *empty = -1;
    return held;
}

/* ---- argument helpers -------------------------------------------------------------- */

static int as_time(PyObject *value, int64_t *out) {
    long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int64_t)v;
    return 0;
}

/* An optional time: None gives ``absent``. */
static int as_optional_time(PyObject *value, int64_t absent, int64_t *out, int *given) {
    if (value == Py_None) {
        *out = absent;
        *given = 0;
        return 0;
    }
    *given = 1;
    return as_time(value, out);
}

static int check_args(const char *name, Py_ssize_t nargs, Py_ssize_t least, Py_ssize_t most) {
    if (nargs < least || nargs > most) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd arguments (%zd given)", name,
                     least, most, nargs);
        return -1;
    }
    return 0;
}

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

static PyObject *profile_breakpoints(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, end;
    if (check_args("breakpoints", nargs, 2, 2) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &end) < 0)
        return NULL;
    Py_ssize_t first = at_time(self, start, 0), last = at_time(self, end, 0);
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
    int64_t start, end;
    if (check_args("min_free", nargs, 2, 2) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &end) < 0)
        return NULL;
    Py_ssize_t first = step_of(self, start), last = at_time(self, end, 0);
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
    int64_t start, end, most;
    if (check_args("copies_during", nargs, 4, 4) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &start) < 0 || as_time(args[2], &end) < 0 ||
        as_time(args[3], &most) < 0)
        return NULL;
    Py_ssize_t empty;
    Py_ssize_t first = step_of(self, start);
    Py_ssize_t last = at_time(self, end, 0);
    return PyLong_FromLongLong(copies_in_steps(self, demand, first, last, most, &empty));
}

static PyObject *profile_copies_until(NativeProfile *self, PyObject *const *args,
                                      Py_ssize_t nargs) {
    int64_t start, duration, most, limit;
    int given;
    if (check_args("copies_until", nargs, 4, 5) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &start) < 0 || as_time(args[2], &duration) < 0 ||
        as_time(args[3], &most) < 0 ||
        as_optional_time(nargs > 4 ? args[4] : Py_None, NEVER, &limit, &given) < 0)
        return NULL;
    int k = self->k;
    Py_ssize_t n = self->n;
    Py_ssize_t first = step_of(self, start);
    Py_ssize_t empty, last;
    int64_t held;
    if (!fits(STEP(self, first), demand, k)) {
        held = 0;
        empty = first;
        last = first;
    } else {
        last = at_time(self, plus(start, duration), first);
        held = copies_in_steps(self, demand, first, last, most, &empty);
    }
    if (empty >= 0) {
        Py_ssize_t room = room_from(self, demand, empty + 1);
        return Py_BuildValue("(iL)", 0, (long long)long_run(self, demand, room, duration, limit));
    }
    int64_t rise = NEVER;
    if (held < most) {
        Py_ssize_t least = last - 1;
        while (least > first && fits_times(STEP(self, least), demand, k, held + 1)) least--;
        rise = least + 1 < n ? self->times[least + 1] : NEVER;
    }
    Py_ssize_t after = last;
    while (after < n && fits_times(STEP(self, after), demand, k, held)) after++;
    int64_t fall = after < n ? self->times[after] - duration + 1 : NEVER;
    return Py_BuildValue("(LL)", (long long)held, (long long)(rise < fall ? rise : fall));
}

/* slots_at's three answers. */
static void slots_at(const NativeProfile *p, const int64_t *demand, int64_t start, int64_t most,
                     int64_t *slots, int64_t *since, int64_t *until) {
    Py_ssize_t at = step_of(p, start);
    const int64_t *step = STEP(p, at);
    *slots = fits(step, demand, p->k) ? copies(step, demand, p->k, most) : 0;
    *since = p->times[at];
    *until = (*slots >= most || at + 1 >= p->n) ? NEVER : p->times[at + 1];
}

static PyObject *profile_slots_at(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, most, slots, since, until;
    if (check_args("slots_at", nargs, 3, 3) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &start) < 0 || as_time(args[2], &most) < 0)
        return NULL;
    slots_at(self, demand, start, most, &slots, &since, &until);
    return Py_BuildValue("(LLL)", (long long)slots, (long long)since, (long long)until);
}

static PyObject *profile_copies_from(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, most, slots, since, until;
    if (check_args("copies_from", nargs, 4, 5) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &start) < 0 || as_time(args[3], &most) < 0)
        return NULL;
    slots_at(self, demand, start, most, &slots, &since, &until);
    return Py_BuildValue("(LL)", (long long)slots, (long long)until);
}

/* earliest_start; 1 with ``found`` set, 0 for none. */
static int earliest(const NativeProfile *p, const int64_t *demand, int64_t duration,
                    int64_t after, int64_t limit, int has_limit, int64_t before, int has_before,
                    int64_t *found) {
    Py_ssize_t n = p->n;
    int k = p->k;
    int64_t last;
    int has_last;
    if (!has_before || (has_limit && limit <= before)) {
        last = limit;
        has_last = has_limit;
    } else {
        last = before;
        has_last = 1;
    }
    Py_ssize_t stop;
    int64_t cut;
    if (!has_last) {
        stop = n;
        cut = NEVER;
    } else if (last <= after) {
        return 0;
    } else {
        stop = at_time(p, last, 0);
        cut = has_limit ? limit : NEVER;
    }
    Py_ssize_t i = (n == 1 || p->times[1] > after) ? 0 : after_time(p, after, 0) - 1;
    for (;;) {
        while (i < stop && !fits(STEP(p, i), demand, k)) i++;
        if (i >= stop) return 0;
        int64_t start = p->times[i] > after ? p->times[i] : after;
        int64_t end = plus(start, duration);
        if (end > cut) end = cut;
        Py_ssize_t j = i + 1;
        int broke = 0;
        while (j < n && p->times[j] < end) {
            if (!fits(STEP(p, j), demand, k)) {
                broke = 1;
                break;
            }
            j++;
        }
        if (!broke) {
            *found = start;
            return 1;
        }
        i = j + 1;
    }
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
    int64_t duration, after, steps, found;
    if (check_args("earliest_or_bound", nargs, 4, 4) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &duration) < 0 || as_time(args[2], &after) < 0 ||
        as_time(args[3], &steps) < 0)
        return NULL;
    Py_ssize_t last = after_time(self, after, 0) + (Py_ssize_t)steps;
    if (last < self->n) {
        int64_t bound = self->times[last];
        if (!earliest(self, demand, duration, after, 0, 0, bound, 1, &found)) found = bound;
        return PyLong_FromLongLong(found);
    }
    if (!earliest(self, demand, duration, after, 0, 0, 0, 0, &found)) found = NEVER;
    return PyLong_FromLongLong(found);
}

static PyObject *profile_earliest_growing(NativeProfile *self, PyObject *const *args,
                                          Py_ssize_t nargs) {
    int64_t after, limit;
    int has_limit;
    if (check_args("earliest_growing", nargs, 3, 4) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[2], &after) < 0 ||
        as_optional_time(nargs > 3 ? args[3] : Py_None, 0, &limit, &has_limit) < 0)
        return NULL;
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
    if (check_args("first_fit", nargs, 2, 2) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &after) < 0) return NULL;
    Py_ssize_t i = room_from(self, demand, step_of(self, after));
    if (i == self->n) Py_RETURN_NONE;
    return PyLong_FromLongLong(self->times[i] > after ? self->times[i] : after);
}

static PyObject *profile_fits_during(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, duration;
    if (check_args("fits_during", nargs, 3, 3) < 0) return NULL;
    const int64_t *demand = demand_of(args[0], self->k);
    if (demand == NULL || as_time(args[1], &start) < 0 || as_time(args[2], &duration) < 0)
        return NULL;
    int64_t end = plus(start, duration);
    int k = self->k;
    for (Py_ssize_t i = step_of(self, start); i < self->n && self->times[i] < end; i++)
        if (!fits(STEP(self, i), demand, k)) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* Add ``sign`` times ``amount`` during [start, end). */
static int add(NativeProfile *p, int64_t start, int64_t end, const int64_t *amount, int sign) {
    int k = p->k;
    Py_ssize_t first = at_time(p, start, 0);
    if (first == p->n || p->times[first] != start) {
        if (first == 0) {
            PyErr_Format(PyExc_ValueError, "time %lld is before the profile's origin %lld",
                         (long long)start, (long long)p->times[0]);
            return -1;
        }
        if (insert_step(p, first, start) < 0) return -1;
    }
    Py_ssize_t last = at_time(p, end, first);
    if (last == p->n || p->times[last] != end) {
        if (insert_step(p, last, end) < 0) return -1;
    }
    for (Py_ssize_t i = first; i < last; i++) {
        int64_t *step = STEP(p, i);
        for (int r = 0; r < k; r++) step[r] += sign * amount[r];
    }
    if (0 < last && last < p->n && same_step(p, last, last - 1)) delete_step(p, last);
    if (0 < first && first < p->n && same_step(p, first, first - 1)) delete_step(p, first);
    return 0;
}

/* A packed change (negative to take): its amounts and sign. */
static const int64_t *change_of(PyObject *packed, int k, int *sign) {
    if (!PyLong_Check(packed)) {
        PyErr_SetString(PyExc_TypeError, "a packed vector must be an int");
        return NULL;
    }
    int negative = PyObject_RichCompareBool(packed, zero, Py_LT);
    if (negative < 0) return NULL;
    if (!negative) {
        *sign = 1;
        return demand_of(packed, k);
    }
    *sign = -1;
    PyObject *positive = PyNumber_Negative(packed);
    if (positive == NULL) return NULL;
    const int64_t *amount = demand_of(positive, k);
    Py_DECREF(positive);
    return amount;
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

static PyObject *profile_reserve(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, duration;
    if (check_args("reserve", nargs, 3, 3) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &duration) < 0)
        return NULL;
    const int64_t *demand = demand_of(args[2], self->k);
    if (demand == NULL || add(self, start, start + duration, demand, -1) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *profile_release(NativeProfile *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t start, duration;
    if (check_args("release", nargs, 3, 3) < 0 || as_time(args[0], &start) < 0 ||
        as_time(args[1], &duration) < 0)
        return NULL;
    const int64_t *demand = demand_of(args[2], self->k);
    if (demand == NULL || add(self, start, start + duration, demand, 1) < 0) return NULL;
    Py_RETURN_NONE;
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
    return PyBool_FromLong(self->n > 1 && self->times[1] <= now);
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

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "berth.core._profile_native",
    .m_doc = "The availability profile in C (see berth.core.profile).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__profile_native(void) {
    field_mask = PyLong_FromLongLong(((long long)1 << (FIELD_BITS - 1)) - 1);
    field_shift = PyLong_FromLong(FIELD_BITS);
    zero = PyLong_FromLong(0);
    if (field_mask == NULL || field_shift == NULL || zero == NULL) return NULL;
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
