/* The node search in C: berth.core.node_search.earliest_shared and choose_ranked (the
 * blocks' floor: _profile_block_walk.h) for a plan whose profiles are all C profiles and
 * whose windows are counted over their length (not a plan that only grows). It reads
 * the profiles' steps directly: a search on 256 nodes asked them about 200 questions
 * through Python calls, and the calls, the tuples and the heap of tuples were most of a
 * QoPS decision. The Python functions stay the reference (the property tests compare
 * the two on every policy) and the path for Python profiles. Same answers, and the same
 * walk but for two things no answer depends on: the order in which nodes due at one
 * start are asked again (each node's count is its own; the ranking orders by room, then
 * node), and the candidates a search without a stop() passes over, after a few, where
 * the blocks' bounds fall short of the count (no placement there). Pure: no I/O.
 */
#ifndef BERTH_PROFILE_SEARCH_H
#define BERTH_PROFILE_SEARCH_H

#include "_profile_block_walk.h"

/* ---- the choice among the nodes with room --------------------------------------------- */

typedef struct {
    int64_t before; /* slots free just before the start (the ranking's key) */
    Py_ssize_t index;
    int64_t slots;   /* slots it holds during the window */
    Py_ssize_t rank; /* its place in the ranking */
} Ranked;

static int by_room_before(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->before != y->before) return x->before < y->before ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The ranking as a min-heap: sift ``room[i]`` down among the first ``n``. */
static void sift_ranked(Ranked *room, Py_ssize_t n, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t least = i, left = 2 * i + 1, right = left + 1;
        if (left < n && by_room_before(&room[left], &room[least]) < 0) least = left;
        if (right < n && by_room_before(&room[right], &room[least]) < 0) least = right;
        if (least == i) return;
        Ranked swap = room[i];
        room[i] = room[least];
        room[least] = swap;
        i = least;
    }
}

/* Most slots first, ties in ranking order (as Python's stable ``sorted``). */
static int by_most_slots(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->slots != y->slots) return x->slots > y->slots ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int set_slots(PyObject *placement, Py_ssize_t index, int64_t take) {
    PyObject *key = PyLong_FromSsize_t(index);
    PyObject *value = PyLong_FromLongLong(take);
    int failed = key == NULL || value == NULL || PyDict_SetItem(placement, key, value) < 0;
    Py_XDECREF(key);
    Py_XDECREF(value);
    return failed ? -1 : 0;
}

/* A new dict with room for ``size`` items (a placement grew its table three times over
 * ~30 nodes), or NULL with an exception set. */
static PyObject *new_dict_for(Py_ssize_t size) {
#if PY_VERSION_HEX < 0x030D0000
    return _PyDict_NewPresized(size);
#else
    (void)size; /* (no public way to presize a dict since 3.13) */
    return PyDict_New();
#endif
}

/* choose_ranked and _choose: the placement (a new dict, node -> slots) among the ``n``
 * nodes of ``room`` (``before`` not yet set), or Py_None (a new reference); NULL on
 * error. ``nodes`` 0: no node count. */
static PyObject *choose(PyObject *profiles, Ranked *room, Py_ssize_t n, const int64_t *demand,
                        int64_t count, int64_t nodes, int64_t start) {
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t since, until;
        NativeProfile *p = (NativeProfile *)PyList_GET_ITEM(profiles, room[i].index);
        slots_at(p, demand, start - 1, count, &room[i].before, &since, &until);
    }
    PyObject *placement = new_dict_for(n < count ? n : count);
    if (placement == NULL) return NULL;
    if (nodes == 0) {
        /* In ranking order until the count is held: most placements need the first few
         * of the nodes with room (about 30 a QoPS placement on 256 nodes, of ~100 asked),
         * so they come off a heap, not a sorted array. */
        for (Py_ssize_t i = n / 2; i-- > 0;) sift_ranked(room, n, i);
        for (Py_ssize_t left = n; left > 0;) {
            Ranked first = room[0];
            room[0] = room[--left];
            sift_ranked(room, left, 0);
            int64_t take = first.slots < count ? first.slots : count;
            if (set_slots(placement, first.index, take) < 0) goto failed;
            count -= take;
            if (count == 0) return placement;
        }
        Py_DECREF(placement);
        Py_RETURN_NONE;
    }
    qsort(room, (size_t)n, sizeof(Ranked), by_room_before);
    if (n < nodes) {
        Py_DECREF(placement);
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = 0; i < n; i++) room[i].rank = i;
    qsort(room, (size_t)n, sizeof(Ranked), by_most_slots);
    int64_t together = 0;
    for (Py_ssize_t i = 0; i < nodes; i++) together += room[i].slots;
    if (together < count) {
        Py_DECREF(placement);
        Py_RETURN_NONE;
    }
    count -= nodes;
    for (Py_ssize_t i = 0; i < nodes; i++) {
        int64_t take = room[i].slots - 1 < count ? room[i].slots - 1 : count;
        if (set_slots(placement, room[i].index, 1 + take) < 0) goto failed;
        count -= take;
    }
    return placement;
failed:
    Py_DECREF(placement);
    return NULL;
}

/* ---- the search ------------------------------------------------------------------------ */

/* Candidates the nodes fail at before the search also walks the blocks' bounds. */
#define BLOCK_WALK_AFTER 4

/* The node profile at ``index`` of ``profiles``, or NULL with an exception set. */
static NativeProfile *node_at(PyObject *profiles, Py_ssize_t index, int k) {
    if (index < 0 || index >= PyList_GET_SIZE(profiles)) {
        PyErr_Format(PyExc_IndexError, "no node %zd", index);
        return NULL;
    }
    PyObject *item = PyList_GET_ITEM(profiles, index);
    if (Py_TYPE(item) != &NativeProfileType || ((NativeProfile *)item)->k != k) {
        PyErr_SetString(PyExc_TypeError, "the native search reads C profiles of one space");
        return NULL;
    }
    return (NativeProfile *)item;
}

static NativeProfile *profile_arg(PyObject *value, int k) {
    if (Py_TYPE(value) != &NativeProfileType || (k >= 0 && ((NativeProfile *)value)->k != k)) {
        PyErr_SetString(PyExc_TypeError, "the native search reads C profiles of one space");
        return NULL;
    }
    return (NativeProfile *)value;
}

/* What one search holds: its arguments, read once, and its scratch. */
typedef struct {
    PyObject *profiles, *ends, *stop;
    int k;
    int64_t demand[MAX_FIELDS], total[MAX_FIELDS];
    int64_t nodes, limit;
    int has_limit;
    Counts c;          /* per node: the slots it holds at the start (0: none, or not asked) */
    int64_t with_room; /* nodes holding a slot at the start */
} Search;

/* Ask node ``index`` at ``start``: its count and when to ask again (or defer it). */
static int ask_node(Search *s, Py_ssize_t index, int64_t start, int in_heap) {
    NativeProfile *p = node_at(s->profiles, index, s->k);
    if (p == NULL) return -1;
    int64_t before = count_ask(&s->c, p, index, start, in_heap);
    s->with_room += (s->c.slots[index] > 0) - (before > 0);
    return 0;
}

/* The members (a list of node indices) of a block, asked at ``start``. */
static int ask_members(Search *s, PyObject *members, int64_t start) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(members); i++) {
        Py_ssize_t index = PyLong_AsSsize_t(PyList_GET_ITEM(members, i));
        if (index == -1 && PyErr_Occurred()) return -1;
        if (ask_node(s, index, start, 0) < 0) return -1;
    }
    return 0;
}

/* The placement at ``start`` when the nodes asked hold the job there, else Py_None. */
static PyObject *placement_at(Search *s, PyObject *able, int64_t start, Ranked *room) {
    Py_ssize_t n = 0, nodes = PyList_GET_SIZE(s->profiles), asked = PyList_GET_SIZE(able);
    /* Only able nodes are asked (a block's members are able nodes), and the choice orders
     * its candidates itself: unless the able nodes are few, every node's count is read in
     * node order, with no Python int converted per able node (a few per cent of a QoPS
     * decision on 256 nodes). */
    int by_node = nodes <= 4 * asked;
    for (Py_ssize_t i = 0; i < (by_node ? nodes : asked); i++) {
        Py_ssize_t index = by_node ? i : PyLong_AsSsize_t(PyList_GET_ITEM(able, i));
        if (index == -1 && PyErr_Occurred()) return NULL;
        if (s->c.slots[index] > 0) {
            room[n].index = index;
            room[n++].slots = s->c.slots[index];
        }
    }
    return choose(s->profiles, room, n, s->demand, s->c.count, s->nodes, start);
}

/* Memory the searches of a run work in, one search after another (a new allocation for
 * each, zeroed whole, was a few per cent of a QoPS decision); freed by its owner. */
typedef struct {
    char *memory;
    size_t size;
} Scratch;

/* At least ``bytes`` of ``scratch`` (its content is not kept), or NULL with an exception. */
static char *scratch_of(Scratch *scratch, size_t bytes) {
    if (bytes > scratch->size) {
        PyMem_Free(scratch->memory);
        scratch->size = 0;
        if ((scratch->memory = PyMem_Malloc(bytes)) == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        scratch->size = bytes;
    }
    return scratch->memory;
}

/* The search of ``s`` (its arguments read: profiles, ends, stop, k, demand, total, the
 * count, duration, node count and limit) among ``able``, ``blocks`` and ``summed`` from
 * ``after`` on, in ``scratch``; see search_shared. */
static PyObject *search_with(Search *s, PyObject *able, PyObject *blocks, NativeProfile *summed,
                             PyObject *before_nodes, int64_t after, int summed_holds,
                             int64_t block_steps, Scratch *scratch) {
    int64_t start = after;
    s->c.demand = s->demand;
    s->c.ask_limit = s->has_limit ? s->limit : NEVER;
    s->c.lazy = !s->has_limit;
    if (PyList_GET_SIZE(able) == 0) Py_RETURN_NONE;
    if (!summed_holds &&
        !earliest(summed, s->total, s->c.duration, after, s->limit, s->has_limit, 0, 0, &start))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(s->profiles);
    Py_ssize_t nb = blocks == Py_None ? 0 : PyList_GET_SIZE(blocks);
    /* Per node a count, a deferral and a hint; the heap; the blocks' profiles, counts,
     * deferrals, hints and heap; the ranking. Only the counts and hints start at zero
     * (the rest is written before it is read). */
    size_t bytes = (size_t)n * (sizeof(int64_t) + 2 * sizeof(Py_ssize_t) + sizeof(Due) +
                                sizeof(Ranked)) +
                   (size_t)nb * (2 * sizeof(Due) + sizeof(NativeProfile *) + sizeof(int64_t) +
                                 3 * sizeof(Py_ssize_t));
    char *at = scratch_of(scratch, bytes + 1);
    if (at == NULL) return NULL;
    s->c.slots = (int64_t *)at;
    memset(s->c.slots, 0, (size_t)n * sizeof(int64_t));
    at += (size_t)n * sizeof(int64_t);
    s->c.due.items = (Due *)at;
    at += (size_t)(n + nb) * sizeof(Due);
    Ranked *room = (Ranked *)at;
    at += (size_t)n * sizeof(Ranked);
    s->c.deferred = (Py_ssize_t *)at;
    at += (size_t)(n + nb) * sizeof(Py_ssize_t);
    NativeProfile **block_profiles = (NativeProfile **)at;
    at += (size_t)nb * sizeof(NativeProfile *);
    int64_t *block_slots = (int64_t *)at;
    at += (size_t)nb * sizeof(int64_t);
    Due *block_due = (Due *)at;
    at += (size_t)nb * sizeof(Due);
    Py_ssize_t *block_deferred = (Py_ssize_t *)at;
    at += (size_t)nb * sizeof(Py_ssize_t);
    Py_ssize_t *block_hints = (Py_ssize_t *)at;
    at += (size_t)nb * sizeof(Py_ssize_t);
    s->c.hints = (Py_ssize_t *)at;
    memset(block_hints, 0, (size_t)(nb + n) * sizeof(Py_ssize_t)); /* (side by side) */
    PyObject *result = NULL;
    Py_ssize_t next = 0; /* the last candidate's place in ``ends`` */
    int failed = 0;      /* candidates at which the nodes did not hold the job */
    for (Py_ssize_t j = 0; j < nb; j++) {
        PyObject *entry = PyList_GET_ITEM(blocks, j);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 ||
            !PyList_Check(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "a block is a (profile, members) tuple");
            goto done;
        }
        if ((block_profiles[j] = profile_arg(PyTuple_GET_ITEM(entry, 0), s->k)) == NULL)
            goto done;
    }
    BlockWalk walk = {.blocks = block_profiles, .nb = nb, .limit = s->limit,
                      .has_limit = s->has_limit, .ends = s->ends,
                      .c = {.demand = s->demand, .count = s->c.count, .duration = s->c.duration,
                            .slots = block_slots, .deferred = block_deferred,
                            .hints = block_hints, .due = {block_due, 0}}};
    if (nb > 0) {
        int64_t floor;
        block_walk_begin(&walk, start);
        int found = block_walk_floor(&walk, start, s->stop, &floor);
        if (found <= 0) {
            if (found == 0) result = Py_NewRef(Py_None);
            goto done;
        }
        if (floor > start) {
            int over = stopped(s->stop);
            if (over < 0) goto done;
            if (over) {
                result = PyLong_FromLongLong(floor);
                goto done;
            }
        }
        start = floor;
    }
    if (before_nodes != Py_None) {
        PyObject *called = PyObject_CallNoArgs(before_nodes);
        if (called == NULL) goto done;
        Py_DECREF(called);
    }
    if (nb == 0) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(able); i++) {
            Py_ssize_t index = PyLong_AsSsize_t(PyList_GET_ITEM(able, i));
            if ((index == -1 && PyErr_Occurred()) || ask_node(s, index, start, 0) < 0)
                goto done;
        }
    } else {
        for (Py_ssize_t j = 0; j < nb; j++) {
            /* A block whose sum the walk found holding a slot through the window at this
             * start (its last) has its earliest start here: its members are asked. */
            int64_t free_from =
                block_slots[j] > 0 ? start
                : earliest_or_bound(block_profiles[j], s->demand, s->c.duration, start, block_steps);
            if (free_from != start) heap_push(&s->c.due, free_from, -1 - j);
            else if (ask_members(s, PyTuple_GET_ITEM(PyList_GET_ITEM(blocks, j), 1), start) < 0)
                goto done;
        }
    }
    for (;;) {
        while (s->c.due.n && s->c.due.items[0].time <= start) {
            Py_ssize_t index = s->c.due.items[0].index;
            if (index >= 0) {
                if (ask_node(s, index, start, 1) < 0) goto done;
                continue;
            }
            Py_ssize_t j = -1 - index; /* a block's sum may have room from now on */
            int64_t free_from =
                earliest_or_bound(block_profiles[j], s->demand, s->c.duration, start, block_steps);
            if (free_from > start) { /* not yet (its time was a bound): ask again then */
                heap_replace(&s->c.due, free_from, index);
                continue;
            }
            heap_pop(&s->c.due);
            if (ask_members(s, PyTuple_GET_ITEM(PyList_GET_ITEM(blocks, j), 1), start) < 0)
                goto done;
        }
        if (s->c.held >= s->c.count && (s->nodes == 0 || s->with_room >= s->nodes)) {
            PyObject *placement = placement_at(s, able, start, room);
            if (placement == NULL) goto done;
            if (placement != Py_None) {
                result = Py_BuildValue("(LN)", (long long)start, placement);
                goto done;
            }
            Py_DECREF(placement);
        }
        for (Py_ssize_t i = 0; i < s->c.waiting; i++) { /* (none at ``start``: when may that change?) */
            NativeProfile *p = node_at(s->profiles, s->c.deferred[i], s->k);
            if (p == NULL) goto done;
            count_due_again(&s->c, p, s->c.deferred[i], start);
        }
        s->c.waiting = 0;
        /* No candidate before the soonest change of a node's answer can differ. */
        next = s->c.due.n ? ends_from(s->ends, s->c.due.items[0].time, next) : PyList_GET_SIZE(s->ends);
        int more = candidate(s->ends, next, s->limit, s->has_limit, &start);
        if (more <= 0) {
            if (more == 0) result = Py_NewRef(Py_None);
            goto done;
        }
        int over = stopped(s->stop);
        if (over < 0) goto done;
        if (over) {
            result = PyLong_FromLongLong(start);
            goto done;
        }
        if (!earliest(summed, s->total, s->c.duration, start, s->limit, s->has_limit, 0, 0, &start)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        /* The blocks' bounds too, on to where they may hold the count, once the nodes
         * have failed at a few candidates (a search that ends within a few pays nothing
         * for the walk); not with a stop(): a budget counts candidates, and a budgeted
         * search must stop where the Python one does. */
        if (nb > 0 && s->stop == Py_None && ++failed > BLOCK_WALK_AFTER) {
            int found = block_walk_floor(&walk, start, Py_None, &start);
            if (found <= 0) {
                if (found == 0) result = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
done:
    return result;
}

/* earliest_shared(profiles, able, blocks, summed, ends, demand, total, count, nodes,
 * duration, after, limit, stop, before_nodes, block_steps): None when no start holds the
 * job, the candidate it stopped at (an int) when stop() said so, else (start, placement).
 * ``blocks``: None or the (summed profile, member list) of each block with able nodes;
 * ``nodes`` 0: no node count. See node_search.earliest_shared, which this follows. */
static PyObject *search_shared(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (check_args("earliest_shared", nargs, 15, 15) < 0) return NULL;
    Search s = {.profiles = args[0], .ends = args[4], .stop = args[12]};
    PyObject *able = args[1], *blocks = args[2];
    int64_t after, block_steps;
    if (!PyList_Check(s.profiles) || !PyList_Check(able) || !PyList_Check(s.ends) ||
        (blocks != Py_None && !PyList_Check(blocks))) {
        PyErr_SetString(PyExc_TypeError, "earliest_shared() takes lists");
        return NULL;
    }
    NativeProfile *summed = profile_arg(args[3], -1);
    if (summed == NULL) return NULL;
    s.k = summed->k;
    const int64_t *unpacked = demand_of(args[5], s.k);
    if (unpacked == NULL) return NULL;
    memcpy(s.demand, unpacked, sizeof(int64_t) * (size_t)s.k);
    if ((unpacked = demand_of(args[6], s.k)) == NULL) return NULL;
    memcpy(s.total, unpacked, sizeof(int64_t) * (size_t)s.k);
    if (as_time(args[7], &s.c.count) < 0 || as_time(args[8], &s.nodes) < 0 ||
        as_time(args[9], &s.c.duration) < 0 || as_time(args[10], &after) < 0 ||
        as_optional_time(args[11], 0, &s.limit, &s.has_limit) < 0 ||
        as_time(args[14], &block_steps) < 0)
        return NULL;
    Scratch scratch = {NULL, 0};
    PyObject *result = search_with(&s, able, blocks, summed, args[13], after, 0, block_steps,
                                   &scratch);
    PyMem_Free(scratch.memory);
    return result;
}

#endif
