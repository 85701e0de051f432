/* Packed resource vectors (berth.core.resources) to and from machine integers, for the
 * C availability profile (_profile_native.c): FIELD_BITS bits per resource, the top one
 * a guard bit. A demand is unpacked once and remembered for the questions after it (a
 * search asks hundreds of profiles about one demand): the same object is found again
 * at once; an equal one is split again when it fits in 64 bits (cheaper than comparing
 * it with the remembered ones: a booking's amounts differ node by node) and found by
 * value when it does not. Times and counts,
 * given as Python ints, become int64 here too. Pure: no I/O.
 */
#ifndef BERTH_PROFILE_PACKED_H
#define BERTH_PROFILE_PACKED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FIELD_BITS 50
#define MAX_FIELDS 32


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

/* unpack_into for a packed int that fits in 64 bits: the same fields, the same error
 * when it has more fields than k. */
static int unpack_small(uint64_t rest, int k, int64_t *out) {
    const uint64_t mask = ((uint64_t)1 << (FIELD_BITS - 1)) - 1;
    for (int r = 0; r < k; r++) {
        out[r] = (int64_t)(rest & mask);
        rest = FIELD_BITS < 64 ? rest >> FIELD_BITS : 0;
    }
    if (rest) {
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
        if (u->packed == packed && u->k == k) return u->amount;
    }
    int64_t amount[MAX_FIELDS];
    int overflow = 0;
    long long small = PyLong_AsLongLongAndOverflow(packed, &overflow);
    if (small == -1 && PyErr_Occurred()) return NULL;
    if (!overflow && small >= 0) {
        /* A machine integer (what a node's slots hold, mostly): split it here, faster
         * than comparing it with the remembered ones. */
        if (unpack_small((uint64_t)small, k, amount) < 0) return NULL;
    } else {
        for (int i = 0; i < REMEMBERED; i++) {
            Unpacked *u = &remembered[i];
            if (u->packed == NULL || u->k != k) continue;
            int same = PyObject_RichCompareBool(u->packed, packed, Py_EQ);
            if (same < 0) return NULL;
            if (same) return u->amount;
        }
        if (non_negative(packed) < 0) return NULL;
        if (unpack_into(packed, k, amount) < 0) return NULL;
    }
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

/* ---- times and counts given as Python ints ---------------------------------------- */

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

/* Made once, when the module is imported. */
static int packed_ready(void) {
    field_mask = PyLong_FromLongLong(((long long)1 << (FIELD_BITS - 1)) - 1);
    field_shift = PyLong_FromLong(FIELD_BITS);
    zero = PyLong_FromLong(0);
    return field_mask == NULL || field_shift == NULL || zero == NULL ? -1 : 0;
}

#endif
