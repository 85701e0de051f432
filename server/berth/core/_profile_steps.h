/* The steps of the C availability profile and the walks over them: storage (times and
 * per-resource amounts), bisection, the fit and count tests, the walks to room, the
 * earliest start and the change of a window. The Python type (_profile_native.c) parses
 * arguments and calls these; they follow berth/core/profile.py and room_walks.py line
 * for line, where the docstrings say why. Pure: no I/O.
 */
#ifndef BERTH_PROFILE_STEPS_H
#define BERTH_PROFILE_STEPS_H

#include "_profile_packed.h"

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

static inline int64_t plus(int64_t a, int64_t b) {
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return a > 0 ? INT64_MAX : INT64_MIN;
    return sum;
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

/* First index from ``lo`` with times[index] >= time (at_time), by a gallop from ``lo``:
 * a few probes near it where a bisection of the rest took a dozen in cold memory (a
 * window's end is a few steps past its start). */
static inline Py_ssize_t at_time_near(const NativeProfile *p, int64_t time, Py_ssize_t lo) {
    Py_ssize_t n = p->n, reach = 1, hi;
    if (lo >= n || p->times[lo] >= time) return lo;
    for (;;) { /* times[lo] < time */
        hi = lo + reach;
        if (hi >= n) {
            hi = n;
            break;
        }
        if (p->times[hi] >= time) break;
        lo = hi;
        reach *= 2;
    }
    while (hi - lo > 1) { /* times[lo] < time <= times[hi] (or hi == n) */
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (p->times[mid] < time) lo = mid;
        else hi = mid;
    }
    return hi;
}

/* step_of(time) found from ``*hint``, a step a search read at an earlier time (the times
 * a search asks a node only grow): a gallop forward from it when it is still at or
 * before ``time`` (any such step is a right place to start, even after a give-back
 * mid-search has changed the steps), else a bisection; the answer is left in ``*hint``. */
static inline Py_ssize_t step_near(const NativeProfile *p, int64_t time, Py_ssize_t *hint) {
    Py_ssize_t from = *hint, at;
    if (from < 0 || from >= p->n || p->times[from] > time) at = step_of(p, time);
    else at = at_time_near(p, plus(time, 1), from) - 1; /* the last step at or before time */
    *hint = at;
    return at;
}

/* Whether the profile has a step to drop before ``now`` (forget_before would change it). */
static inline int has_past(const NativeProfile *p, int64_t now) {
    return p->n > 1 && p->times[1] <= now;
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

/* Steps a walk to a run of room long enough takes before it answers where it is, as
 * the Python profile's (Profile._LONG_WALK_STEPS): a start no earlier than the one it
 * walks to, which is all a search needs (it asks again from there if it gets that far).
 * Walked to the end, the first question to a node booked far ahead went through
 * thousands of steps: 77 % of all the steps the 4,096-node daemon walked. */
#define LONG_WALK_STEPS 64

/* The start of the first step at or after ``index`` that starts a run of steps with room
 * for ``demand`` at least ``duration`` long (NEVER if none): no earlier start from step
 * ``index`` on has room throughout its window. The walk stops at the first step from
 * ``limit`` on and after LONG_WALK_STEPS steps, answering the time it reached. */
static int64_t long_run(const NativeProfile *p, const int64_t *demand, Py_ssize_t index,
                        int64_t duration, int64_t limit) {
    Py_ssize_t n = p->n, stop_at = index + LONG_WALK_STEPS;
    int k = p->k;
    for (;;) {
        while (index < n && index < stop_at && !fits(STEP(p, index), demand, k)) index++;
        if (index >= n) return NEVER;
        if (index >= stop_at || p->times[index] >= limit) break;
        int64_t reach = plus(p->times[index], duration);
        Py_ssize_t end = index + 1;
        while (end < n && p->times[end] < reach && fits(STEP(p, end), demand, k)) end++;
        if (end == n || p->times[end] >= reach) break;
        index = end + 1; /* ``end`` has room for none: on to the next step with room */
    }
    return p->times[index];
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

/* Whether ``demand`` fits at the instant ``start``, held in step ``first`` (step_of):
 * fits_during(p, demand, start, 1). */
static inline int room_at(const NativeProfile *p, const int64_t *demand, int64_t start,
                          Py_ssize_t first) {
    return p->times[first] > start || fits(STEP(p, first), demand, p->k);
}

/* copies_until's answers: the copies of ``demand`` (at most ``most``) held during
 * [start, start + duration), and a time until which that count holds (see profile.py);
 * ``first`` is the step holding ``start`` (step_of). */
static void copies_until_from(const NativeProfile *p, const int64_t *demand, int64_t start,
                              int64_t duration, int64_t most, int64_t limit, Py_ssize_t first,
                              int64_t *held_out, int64_t *until_out) {
    int k = p->k;
    Py_ssize_t n = p->n;
    Py_ssize_t empty, last;
    int64_t held;
    if (!fits(STEP(p, first), demand, k)) {
        held = 0;
        empty = first;
        last = first;
    } else {
        last = at_time_near(p, plus(start, duration), first);
        held = copies_in_steps(p, demand, first, last, most, &empty);
    }
    if (empty >= 0) {
        *held_out = 0;
        *until_out = long_run(p, demand, empty + 1, duration, limit);
        return;
    }
    int64_t rise = NEVER;
    if (held < most) {
        Py_ssize_t least = last - 1;
        while (least > first && fits_times(STEP(p, least), demand, k, held + 1)) least--;
        rise = least + 1 < n ? p->times[least + 1] : NEVER;
    }
    Py_ssize_t after = last;
    while (after < n && fits_times(STEP(p, after), demand, k, held)) after++;
    int64_t fall = after < n ? p->times[after] - duration + 1 : NEVER;
    *held_out = held;
    *until_out = rise < fall ? rise : fall;
}

static void copies_until(const NativeProfile *p, const int64_t *demand, int64_t start,
                         int64_t duration, int64_t most, int64_t limit, int64_t *held_out,
                         int64_t *until_out) {
    copies_until_from(p, demand, start, duration, most, limit, step_of(p, start), held_out,
                      until_out);
}

/* Whether ``demand`` fits in every step of [start, start + duration). */
static int fits_during(const NativeProfile *p, const int64_t *demand, int64_t start,
                       int64_t duration) {
    int64_t end = plus(start, duration);
    int k = p->k;
    for (Py_ssize_t i = step_of(p, start); i < p->n && p->times[i] < end; i++)
        if (!fits(STEP(p, i), demand, k)) return 0;
    return 1;
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

/* earliest_or_bound: the earliest start from ``after`` on, or the time of the step
 * ``steps`` past it when none comes before (a bound); NEVER when none at all. */
static int64_t earliest_or_bound(const NativeProfile *p, const int64_t *demand, int64_t duration,
                                 int64_t after, int64_t steps) {
    int64_t found;
    Py_ssize_t last = after_time(p, after, 0) + (Py_ssize_t)steps;
    if (last < p->n) {
        int64_t bound = p->times[last];
        return earliest(p, demand, duration, after, 0, 0, bound, 1, &found) ? found : bound;
    }
    return earliest(p, demand, duration, after, 0, 0, 0, 0, &found) ? found : NEVER;
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

#endif
