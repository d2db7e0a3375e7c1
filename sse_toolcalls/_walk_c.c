/* The compiled twin of the parsed-event walk, sse_toolcalls.dialects._parsed._measure_py
 * (STYLE.md item 18).
 *
 * measure(payload) walks a parsed JSON object (an SDK's event, a plain dict) once and
 * answers what the pure walk answers when the object is JSON the text path takes: its
 * nesting depth and the same lower bound of its JSON size, counted the same way (per
 * object its braces and per member a key's quotes, a colon and a comma; per array its
 * brackets and a comma per element; per string its quotes and its UTF-8 bytes; one byte
 * per other value). When the object holds anything the pure walk refuses (a value no JSON
 * can carry, a non-string key, NaN or an infinity, an integer that overflows a double, a
 * lone surrogate) or is larger than the limit it is given, it answers None and raises
 * nothing (and stops walking at the limit): _parsed.py then runs the pure walk,
 * which raises its own error, so each message, its type and which of two problems wins
 * have one owner (STYLE.md item 17). A refused event ends its stream, so the second walk
 * costs nothing that matters; tests/test_walk_twins.py holds the two verdicts equal.
 *
 * The types are tested exactly as the pure walk tests them: a value is a dict, list, str,
 * int, float, bool or None by its exact type (a str subclass, a dict subclass, an IntEnum
 * or a float subclass is refused), while a key may be any str (the pure walk measures
 * keys with str.join, which takes str subclasses).
 *
 * No recursion: the walk keeps its own stack of (container, position) frames, on the C
 * stack for the first 64 levels and on the heap past them, so no nesting can overflow
 * the C stack. Nothing here runs Python code (exact dicts and lists are read in place,
 * no __eq__, __hash__ or __index__ is called), so no container can change under the walk
 * and borrowed references stay valid until it returns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Frames kept on the C stack: every provider's event nests far less (MAX_EVENT_DEPTH is
 * 128), so the heap is only touched by hostile objects. */
#define INLINE_FRAMES 64

/* Past this many levels (1 MiB of frames) the walk gives up and answers None, leaving
 * the object to the pure walk, which looks there for an object that holds itself (its
 * _SELF_CHECK_DEPTH, the same number): without the bound such an object would take the
 * machine's memory here. */
#define MAX_FRAMES (1 << 16)

typedef struct {
    PyObject *node; /* borrowed: an exact dict or list, alive as long as the payload */
    Py_ssize_t pos; /* PyDict_Next's position, or the next list index */
} Frame;

/* Counts add up saturating: references to one string may repeat it past 2**64 bytes,
 * which must read as "too large", never wrap to a small size. */
static inline void
grow(uint64_t *size, uint64_t n)
{
    *size = n > UINT64_MAX - *size ? UINT64_MAX : *size + n;
}

/* Characters read to find UTF-8 lengths since the module was loaded: the walk's work on
 * strings, in a unit a test can count (tests/test_walk_budget.py), never a clock. */
static uint64_t chars_scanned;

/* The UTF-8 bytes of a non-ASCII str beyond one per character; -1 on a lone surrogate
 * (which no UTF-8 can carry: the pure walk's encode("utf-8") fails on it). */
static int64_t
utf8_extra(PyObject *text)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    chars_scanned += (uint64_t)length;
    uint64_t bytes = 0; /* the extra ones */
    const void *data = PyUnicode_DATA(text);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND: {
        /* Latin-1: each character past 0x7F is two bytes, and none is a surrogate. */
        const Py_UCS1 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            bytes += chars[i] >> 7;
        }
        break;
    }
    case PyUnicode_2BYTE_KIND: {
        const Py_UCS2 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS2 c = chars[i];
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            }
            else if (c >= 0xD800 && c <= 0xDFFF) {
                return -1;
            }
            else {
                bytes += 2;
            }
        }
        break;
    }
    default: {
        const Py_UCS4 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS4 c = chars[i];
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            }
            else if (c < 0x10000) {
                if (c >= 0xD800 && c <= 0xDFFF) {
                    return -1;
                }
                bytes += 2;
            }
            else {
                bytes += 3;
            }
        }
        break;
    }
    }
    return (int64_t)bytes;
}

/* Non-ASCII strings already measured in this walk, by address: an object that refers to
 * one string many times (20,000 references to one string of a kilobyte) paid its scan per
 * reference, 251 times the pure walk's one join (issue 29). Direct-mapped, filled only
 * once a non-ASCII string is met, so an ASCII event never touches it. Addresses stay
 * valid for the whole walk: it runs no Python code, so nothing is freed under it. */
#define SEEN_SLOTS 64

typedef struct {
    int used;
    struct {
        PyObject *text;
        int64_t extra;
    } slot[SEEN_SLOTS];
} Seen;

/* The UTF-8 length of a str, added to *size as its characters and then its extra bytes
 * (so that *size crosses the limit before a long string is scanned, see measure); -1 on
 * a lone surrogate, or on a string that cannot be made ready (an error set by CPython,
 * cleared here: the pure walk reports). */
static int
add_utf8(PyObject *text, uint64_t *size, uint64_t limit, Seen *seen)
{
    if (PyUnicode_READY(text) < 0) {
        PyErr_Clear();
        return -1;
    }
    grow(size, (uint64_t)PyUnicode_GET_LENGTH(text));
    if (PyUnicode_IS_ASCII(text) || *size > limit) {
        /* Past the limit the answer is None whatever the extra bytes: not scanned. */
        return 0;
    }
    if (!seen->used) {
        memset(seen->slot, 0, sizeof(seen->slot));
        seen->used = 1;
    }
    size_t at = ((uintptr_t)text >> 4) % SEEN_SLOTS;
    int64_t extra;
    if (seen->slot[at].text == text) {
        extra = seen->slot[at].extra;
    }
    else {
        extra = utf8_extra(text);
        seen->slot[at].text = text;
        seen->slot[at].extra = extra;
    }
    if (extra < 0) {
        return -1;
    }
    grow(size, (uint64_t)extra);
    return 0;
}

/* Whether an exact int is one the text path reads: a double must hold it without
 * rounding to infinity (orjson refuses "number is infinity when parsed as double"; the
 * pure walk asks float(), which is PyLong_AsDouble). */
static int
int_fits_double(PyObject *value)
{
    int overflow = 0;
    (void)PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow) {
        return 1;
    }
    if (PyLong_AsDouble(value) == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* A container's own bytes, counted when it is entered (as the pure walk counts a node). */
static inline void
add_container(PyObject *node, uint64_t *size)
{
    if (PyDict_CheckExact(node)) {
        grow(size, 2 + 4 * (uint64_t)PyDict_GET_SIZE(node));
    }
    else {
        grow(size, 2 + (uint64_t)PyList_GET_SIZE(node));
    }
}

static PyObject *
measure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "measure() takes a dict and a limit");
        return NULL;
    }
    PyObject *payload = args[0];
    unsigned long long limit = PyLong_AsUnsignedLongLong(args[1]);
    if (limit == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    if (!PyDict_CheckExact(payload)) {
        /* _parsed.py hands over exact dicts only; anything else is a bug of ours. */
        PyErr_Format(PyExc_TypeError, "measure() takes a dict, not %.100s",
                     Py_TYPE(payload)->tp_name);
        return NULL;
    }
    Frame inline_frames[INLINE_FRAMES];
    Frame *stack = inline_frames;
    Py_ssize_t capacity = INLINE_FRAMES;
    Py_ssize_t top = 0;
    Py_ssize_t deepest = 1;
    uint64_t size = 0;
    int refused = 0;
    Seen seen;
    seen.used = 0;

    add_container(payload, &size);
    stack[top++] = (Frame){payload, 0};
    while (top > 0) {
        Frame *frame = &stack[top - 1];
        PyObject *value;
        if (PyDict_CheckExact(frame->node)) {
            PyObject *key;
            if (!PyDict_Next(frame->node, &frame->pos, &key, &value)) {
                top--;
                continue;
            }
            if (!PyUnicode_Check(key) || add_utf8(key, &size, limit, &seen) < 0) {
                refused = 1;
                break;
            }
        }
        else {
            if (frame->pos >= PyList_GET_SIZE(frame->node)) {
                top--;
                continue;
            }
            value = PyList_GET_ITEM(frame->node, frame->pos);
            frame->pos++;
        }
        PyTypeObject *kind = Py_TYPE(value);
        if (kind == &PyUnicode_Type) {
            grow(&size, 2);
            if (add_utf8(value, &size, limit, &seen) < 0) {
                refused = 1;
                break;
            }
        }
        else if (value == Py_None || kind == &PyBool_Type) {
            grow(&size, 1);
        }
        else if (kind == &PyLong_Type) {
            grow(&size, 1);
            if (!int_fits_double(value)) {
                refused = 1;
                break;
            }
        }
        else if (kind == &PyFloat_Type) {
            grow(&size, 1);
            if (!isfinite(PyFloat_AS_DOUBLE(value))) {
                refused = 1;
                break;
            }
        }
        else if (kind == &PyDict_Type || kind == &PyList_Type) {
            if (top == capacity) {
                if (capacity >= MAX_FRAMES) {
                    refused = 1;
                    break;
                }
                Py_ssize_t wanted = capacity * 2;
                Frame *grown;
                if (stack == inline_frames) {
                    grown = PyMem_Malloc((size_t)wanted * sizeof(Frame));
                    if (grown != NULL) {
                        memcpy(grown, inline_frames, sizeof(inline_frames));
                    }
                }
                else {
                    grown = PyMem_Realloc(stack, (size_t)wanted * sizeof(Frame));
                }
                if (grown == NULL) {
                    /* Out of memory for frames: the pure walk decides (or fails alike). */
                    refused = 1;
                    break;
                }
                stack = grown;
                capacity = wanted;
            }
            add_container(value, &size);
            if (size > limit) {
                /* Past the limit: the pure walk says how far it got (it stops at the end
                 * of a level), so that a DAG of shared containers is not walked out. */
                refused = 1;
                break;
            }
            stack[top++] = (Frame){value, 0};
            if (top > deepest) {
                deepest = top;
            }
        }
        else {
            refused = 1;
            break;
        }
        if (size > limit) {
            /* Counted as the walk goes: past the limit it stops, so its work is bounded
             * by the limit whatever the object (every value looked at was counted first,
             * in its container's count). The pure walk then says how large. */
            refused = 1;
            break;
        }
    }
    if (stack != inline_frames) {
        PyMem_Free(stack);
    }
    if (refused || size > limit) {
        /* Refused, or too large: the pure walk gives the error and its size. */
        Py_RETURN_NONE;
    }
    PyObject *answer = PyTuple_New(2);
    PyObject *depth_obj = PyLong_FromSsize_t(deepest);
    PyObject *size_obj = PyLong_FromUnsignedLongLong((unsigned long long)size);
    if (answer == NULL || depth_obj == NULL || size_obj == NULL) {
        Py_XDECREF(answer);
        Py_XDECREF(depth_obj);
        Py_XDECREF(size_obj);
        return NULL;
    }
    PyTuple_SET_ITEM(answer, 0, depth_obj);
    PyTuple_SET_ITEM(answer, 1, size_obj);
    return answer;
}

static PyObject *
scanned(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong((unsigned long long)chars_scanned);
}

static PyMethodDef module_methods[] = {
    {"_chars_scanned", scanned, METH_NOARGS,
     "Characters read to find UTF-8 lengths since the module was loaded (for tests)."},
    {"measure", (PyCFunction)(void (*)(void))measure, METH_FASTCALL,
     "measure(payload, limit) -> (depth, size) | None: the nesting depth of a parsed JSON "
     "object and a lower bound of its JSON size in bytes, or None when it holds what the "
     "text path refuses or is larger than limit bytes (the pure walk then says what)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sse_toolcalls._walk_c",
    .m_doc = "The compiled twin of the parsed-event walk; use it through dialects/_parsed.py.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__walk_c(void)
{
    return PyModule_Create(&module_def);
}
