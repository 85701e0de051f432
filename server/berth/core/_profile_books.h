/* The upkeep of many C profiles at once. Booking a placement: what NodePlan.reserve and
 * release do to the nodes' profiles, the aggregate and the blocks' sums, in one call (a
 * placement on a large cluster is dozens to hundreds of nodes; in Python each was a
 * method call with a packed amount to unpack, and the blocks' sums a dictionary built
 * per booking: a third of a QoPS decision, which takes out and books again every
 * waiting job). And which profiles have a past to forget. Pure: no I/O.
 */
#ifndef BERTH_PROFILE_BOOKS_H
#define BERTH_PROFILE_BOOKS_H

#include "_profile_steps.h"

/* book_nodes(profiles, held, start, end, sign, aggregate, blocks, block_of): add ``sign``
 * times each node's packed amount of ``held`` (node -> amount) during [start, end) to
 * its profile (``profiles`` None: to none), their total to ``aggregate`` (None: none),
 * and each block's part to its sum (``blocks``: the blocks' profiles, ``block_of``: each
 * node's block; None: none). */
static PyObject *book_nodes(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("book_nodes", nargs, 8, 8) < 0) return NULL;
    PyObject *profiles = args[0], *held = args[1], *blocks = args[6], *block_of = args[7];
    int64_t start, end, sign;
    if (as_time(args[2], &start) < 0 || as_time(args[3], &end) < 0 ||
        as_time(args[4], &sign) < 0)
        return NULL;
    if (!PyDict_Check(held) || (profiles != Py_None && !PyList_Check(profiles)) ||
        (blocks != Py_None && (!PyList_Check(blocks) || !PyList_Check(block_of)))) {
        PyErr_SetString(PyExc_TypeError, "book_nodes() takes a dict of amounts and lists");
        return NULL;
    }
    NativeProfile *aggregate = args[5] == Py_None ? NULL : profile_arg(args[5], -1);
    if (args[5] != Py_None && aggregate == NULL) return NULL;
    PyObject *first = aggregate != NULL ? args[5]
                      : blocks != Py_None && PyList_GET_SIZE(blocks) > 0 ? PyList_GET_ITEM(blocks, 0)
                      : profiles != Py_None && PyList_GET_SIZE(profiles) > 0
                          ? PyList_GET_ITEM(profiles, 0)
                          : NULL;
    if (first == NULL) Py_RETURN_NONE; /* nothing to book on */
    NativeProfile *one = profile_arg(first, -1);
    if (one == NULL) return NULL;
    int k = one->k;
    if (PyDict_GET_SIZE(held) == 0) Py_RETURN_NONE;
    Py_ssize_t nb = blocks == Py_None ? 0 : PyList_GET_SIZE(blocks);
    /* Per block its part of the amount, and the blocks touched in order. */
    int64_t *parts = PyMem_Calloc((size_t)nb * (size_t)k + (size_t)k + 1, sizeof(int64_t));
    Py_ssize_t *touched = PyMem_Calloc((size_t)nb + 1, sizeof(Py_ssize_t));
    char *seen = PyMem_Calloc((size_t)nb + 1, 1);
    int64_t *total = parts + (size_t)nb * (size_t)k;
    PyObject *result = NULL;
    if (parts == NULL || touched == NULL || seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t at = 0, count = 0;
    PyObject *key, *value;
    while (PyDict_Next(held, &at, &key, &value)) {
        Py_ssize_t index = PyLong_AsSsize_t(key);
        if (index == -1 && PyErr_Occurred()) goto done;
        const int64_t *amount = demand_of(value, k);
        if (amount == NULL) goto done;
        if (profiles != Py_None) {
            NativeProfile *node = node_at(profiles, index, k);
            if (node == NULL || add(node, start, end, amount, (int)sign) < 0) goto done;
        }
        for (int r = 0; r < k; r++) total[r] += amount[r];
        if (nb > 0) {
            if (index < 0 || index >= PyList_GET_SIZE(block_of)) {
                PyErr_Format(PyExc_IndexError, "no node %zd", index);
                goto done;
            }
            Py_ssize_t block = PyLong_AsSsize_t(PyList_GET_ITEM(block_of, index));
            if ((block == -1 && PyErr_Occurred())) goto done;
            if (block < 0 || block >= nb) {
                PyErr_Format(PyExc_IndexError, "no block %zd", block);
                goto done;
            }
            int64_t *part = parts + (size_t)block * (size_t)k;
            if (!seen[block]) {
                seen[block] = 1;
                touched[count++] = block;
            }
            for (int r = 0; r < k; r++) part[r] += amount[r];
        }
    }
    if (aggregate != NULL && add(aggregate, start, end, total, (int)sign) < 0) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        NativeProfile *sum = profile_arg(PyList_GET_ITEM(blocks, touched[i]), k);
        if (sum == NULL ||
            add(sum, start, end, parts + (size_t)touched[i] * (size_t)k, (int)sign) < 0)
            goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(parts);
    PyMem_Free(touched);
    PyMem_Free(seen);
    return result;
}

/* with_past(profiles, now): the places in the list ``profiles`` of the C profiles with a
 * step to drop before ``now`` (a daemon's plan asks its 4,096 nodes at every advance;
 * most have none). */
static PyObject *profiles_with_past(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    int64_t now;
    if (check_args("with_past", nargs, 2, 2) < 0 || as_time(args[1], &now) < 0) return NULL;
    if (!PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "with_past() takes a list of profiles");
        return NULL;
    }
    PyObject *found = PyList_New(0);
    for (Py_ssize_t i = 0; found != NULL && i < PyList_GET_SIZE(args[0]); i++) {
        NativeProfile *p = profile_arg(PyList_GET_ITEM(args[0], i), -1);
        if (p == NULL) {
            Py_CLEAR(found);
            break;
        }
        if (has_past(p, now)) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(found, index) < 0) Py_CLEAR(found);
            Py_XDECREF(index);
        }
    }
    return found;
}

/* Amounts that fit in 64 bits, one Python int per value, kept from one booking to the
 * next (direct-mapped by value; a clash replaces the one kept). A job placed again on
 * the same nodes then holds the very same amounts: comparing its old and new amounts
 * per node (node_board.commit) is a comparison of identities, and the bookings that
 * read them find them unpacked already (demand_of remembers by identity). */
#define KEPT_AMOUNTS 1024
static struct {
    long long value;
    PyObject *object; /* a strong reference, or NULL */
} kept_amounts[KEPT_AMOUNTS];

/* The Python int ``value`` (a new reference), or NULL with an exception set. */
static PyObject *kept_amount(long long value) {
    size_t slot = (size_t)(((uint64_t)value * UINT64_C(0x9E3779B97F4A7C15)) >> 54);
    if (kept_amounts[slot].object != NULL && kept_amounts[slot].value == value)
        return Py_NewRef(kept_amounts[slot].object);
    PyObject *made = PyLong_FromLongLong(value);
    if (made == NULL) return NULL;
    Py_XSETREF(kept_amounts[slot].object, Py_NewRef(made));
    kept_amounts[slot].value = value;
    return made;
}

/* Slot counts below this share their amount in a placement's ``held`` (held_of). */
#define SHARED_AMOUNTS 65

/* held_of(placement, demand): {node: demand * slots} for a placement of slots of the
 * packed ``demand`` (NodePlan.held for slots that share nodes), each product computed
 * in 64 bits when it fits there (a placement's dict was 8 % of a QoPS decision, built
 * in Python); new Python ints equal to the Python products either way. */
static PyObject *held_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("held_of", nargs, 2, 2) < 0) return NULL;
    PyObject *placement = args[0], *demand = args[1];
    if (!PyDict_Check(placement) || !PyLong_Check(demand)) {
        PyErr_SetString(PyExc_TypeError, "held_of() takes a dict and an int");
        return NULL;
    }
    int demand_big = 0;
    long long small = PyLong_AsLongLongAndOverflow(demand, &demand_big);
    if (small == -1 && PyErr_Occurred()) return NULL;
    /* A copy of the placement whose values are replaced: the same keys, in the same
     * order, with no table grown key by key (a copy of a dict built by insertions only
     * is a copy of its table). */
    PyObject *held = PyDict_Copy(placement);
    if (held == NULL) return NULL;
    /* One amount per slot count, shared by the nodes holding that many: most nodes of a
     * placement hold the same count, and the booking that reads them back finds a shared
     * amount unpacked already (demand_of remembers its last ones by identity). */
    PyObject *amounts[SHARED_AMOUNTS] = {NULL};
    Py_ssize_t at = 0;
    PyObject *key, *slots;
    while (PyDict_Next(placement, &at, &key, &slots)) {
        long long count = 0, product = 0;
        int slots_big = 1;
        if (PyLong_Check(slots)) {
            count = PyLong_AsLongLongAndOverflow(slots, &slots_big);
            if (count == -1 && PyErr_Occurred()) goto failed;
        }
        int shared = !slots_big && count >= 0 && count < SHARED_AMOUNTS;
        PyObject *amount = shared ? amounts[count] : NULL;
        if (amount != NULL) Py_INCREF(amount);
        else if (!demand_big && !slots_big && !__builtin_mul_overflow(small, count, &product))
            amount = kept_amount(product);
        else amount = PyNumber_Multiply(demand, slots);
        if (amount == NULL) goto failed;
        if (shared && amounts[count] == NULL) amounts[count] = Py_NewRef(amount);
        int stored = PyDict_SetItem(held, key, amount);
        Py_DECREF(amount);
        if (stored < 0) goto failed;
    }
    for (int i = 0; i < SHARED_AMOUNTS; i++) Py_XDECREF(amounts[i]);
    return held;
failed:
    for (int i = 0; i < SHARED_AMOUNTS; i++) Py_XDECREF(amounts[i]);
    Py_DECREF(held);
    return NULL;
}

#endif
