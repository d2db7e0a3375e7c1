/* The compiled twin of sse_toolcalls.framing.sse.SSEFramer (STYLE.md item 18).
 *
 * Same events, same errors, same limits, chunk for chunk, as the pure-Python framer in
 * sse.py; tests/test_sse_twins.py holds the two equal on Hypothesis streams under every
 * split, and tests/test_sse_reference.py holds both to the plain WHATWG reference. The
 * constants, the event class and the exception classes come from sse.py through
 * _setup(), so each has one owner (STYLE.md item 17).
 *
 * The structure follows the pure twin's on purpose wherever a limit is checked (once per
 * chunk, on the bytes after CR normalisation, the BOM stripped from the first complete
 * line): an error must come from the same feed() call with the same size. Between those
 * checks the lines are interpreted one by one, which the pure twin's fast paths equal.
 * "9.2.6 Interpreting an event stream" of the HTML Living Standard is quoted where a line
 * implements it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h> /* scan_avx2, built for AVX2 by its target attribute */
#endif
#include <string.h>

/* The per-line and per-event steps, forced inline into the line loop: called, their
 * prologues and epilogues were 50 instructions a W4 read (callgrind; -2% to -5% a read
 * in W1 and W4 inlined). */
#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

/* Set once by _setup(); owned references for the life of the process. */
static PyObject *event_type_obj;  /* ServerSentEvent (a NamedTuple: a tuple subclass) */
static PyObject *too_large_exc;   /* EventTooLargeError */
static PyObject *limit_exc;       /* LimitExceededError */
static PyObject *usage_exc;       /* UsageError */
static PyObject *framing_exc;     /* FramingError */
static PyObject *base_exc;        /* SSEToolCallsError */
static Py_ssize_t default_max_event_bytes = -1;
static Py_ssize_t max_retry_digits = -1;
static Py_ssize_t max_data_lines = -1;
static PyObject *str_message;     /* "message" */
static PyObject *str_empty;       /* "" */
static PyObject *str_lf;          /* "\n" */

enum { OPEN = 0, FINISHED = 1, FAILED = 2 };
static const char *state_names[] = {"open", "finished", "failed"};

typedef struct {
    PyObject_HEAD
    Py_ssize_t max_event_bytes;
    char *pend;              /* the unfinished line's bytes (CR already normalised) */
    Py_ssize_t pend_len;
    Py_ssize_t pend_cap;
    Py_ssize_t block_bytes;  /* the pending block's bytes, as the pure twin counts them */
    /* The block's data values (owned str), in a C array rather than a list: a list's
     * append and clear were 41 and 14 instructions a line of a W4 Chat feed (callgrind). */
    PyObject **vals;
    Py_ssize_t nvals;
    Py_ssize_t vcap;
    /* The events this feed() has dispatched so far (owned), moved into a list of the
     * right size at its end: PyList_New(0) and PyList_Append per event, which grows the
     * list's array on its first append, were 155 instructions of a W4 Chat feed. Kept
     * between feeds, empty, so that its storage is allocated once. */
    PyObject **out;
    Py_ssize_t nout;
    Py_ssize_t ocap;
    PyObject *event_type;    /* str */
    PyObject *type_seen;     /* str or NULL: the last event type decoded, reused when the
                              * next event line has the same bytes */
    PyObject *id_buffer;     /* str */
    PyObject *last_event_id; /* str */
    PyObject *block_retry;   /* int or None */
    PyObject *retry;         /* int or None */
    int skip_lf;
    int bom_checked;
    int saw_cr;              /* a read held a CR: the stream's reads skip feed_whole_lines */
    int state;
    int ready;               /* __init__ has run */
    int busy;                /* inside feed() or finish(): a finalizer the collector runs
                              * during an allocation there, or finish()'s callback, may
                              * call this framer again; it is refused, because the buffers
                              * it would change (or free) are being read (issue 29) */
} Framer;

/* ---------------------------------------------------------------------------------- */

/* Doubles an array of references (push_ref's rare case, kept out of line). */
static int
grow_refs(PyObject ***items, Py_ssize_t *cap)
{
    Py_ssize_t grown_cap = *cap ? *cap * 2 : 8;
    /* A feed's first event allocates (take_events gave the last array away): malloc
     * rather than realloc of NULL, which takes a longer way to the same allocator. */
    PyObject **grown = *items == NULL ? PyMem_New(PyObject *, (size_t)grown_cap)
                                      : PyMem_Resize(*items, PyObject *, (size_t)grown_cap);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = grown;
    *cap = grown_cap;
    return 0;
}

/* Append `obj` to a growing array of owned references; steals `obj` even on failure.
 * Inline: called, it was 22 instructions a line (callgrind, W4 Chat). */
static inline int
push_ref(PyObject ***items, Py_ssize_t *len, Py_ssize_t *cap, PyObject *obj)
{
    if (*len == *cap && grow_refs(items, cap) < 0) {
        Py_DECREF(obj);
        return -1;
    }
    (*items)[(*len)++] = obj;
    return 0;
}

static void
clear_refs(PyObject **items, Py_ssize_t *len)
{
    /* Emptied first, so that a str's dealloc never sees a half-cleared array. */
    Py_ssize_t n = *len;
    *len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_DECREF(items[i]);
    }
}

static void
clear_vals(Framer *self)
{
    clear_refs(self->vals, &self->nvals);
}

static void
drop_buffers(Framer *self)
{
    self->pend_len = 0;
    if (self->pend_cap > 4096) {
        /* A failed or finished framer should not keep a huge line alive. */
        PyMem_Free(self->pend);
        self->pend = NULL;
        self->pend_cap = 0;
    }
    clear_vals(self);
    if (self->vcap > 1024) {
        PyMem_Free(self->vals);
        self->vals = NULL;
        self->vcap = 0;
    }
}

static int
pend_append(Framer *self, const char *s, Py_ssize_t n)
{
    if (n <= 0) {
        return 0;
    }
    if (self->pend_len > PY_SSIZE_T_MAX - n) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = self->pend_len + n;
    if (need > self->pend_cap) {
        /* Doubling: a line that arrives in many small reads stays linear (STYLE.md 4). */
        Py_ssize_t cap = self->pend_cap ? self->pend_cap : 256;
        while (cap < need) {
            cap = cap > PY_SSIZE_T_MAX / 2 ? need : cap * 2;
        }
        char *grown = PyMem_Realloc(self->pend, (size_t)cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->pend = grown;
        self->pend_cap = cap;
    }
    memcpy(self->pend + self->pend_len, s, (size_t)n);
    self->pend_len = need;
    return 0;
}

/* Raise `cls(message, **kwargs)`; always returns -1. */
static int
raise_with(PyObject *cls, PyObject *message, PyObject *kwargs)
{
    if (message == NULL || kwargs == NULL) {
        Py_XDECREF(message);
        Py_XDECREF(kwargs);
        return -1;
    }
    PyObject *args = PyTuple_Pack(1, message);
    Py_DECREF(message);
    if (args == NULL) {
        Py_DECREF(kwargs);
        return -1;
    }
    PyObject *exc = PyObject_Call(cls, args, kwargs);
    Py_DECREF(args);
    Py_DECREF(kwargs);
    if (exc == NULL) {
        return -1;
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return -1;
}

static PyObject *take_events(Framer *self);

/* The events this feed() has dispatched so far, as the error's `events` keyword: they
 * come before the limit's crossing in the stream, and the caller reads them before it
 * fails, as it would have had the read been split before the failing event (issue 29).
 * The keyword dict, or NULL with an error set. */
static PyObject *
error_kwargs(Framer *self)
{
    PyObject *events = take_events(self);
    if (events == NULL) {
        return NULL;
    }
    PyObject *kwargs = PyDict_New();
    if (kwargs == NULL || PyDict_SetItemString(kwargs, "events", events) < 0) {
        Py_XDECREF(kwargs);
        kwargs = NULL;
    }
    Py_DECREF(events);
    return kwargs;
}

/* Adds `name`: `value` (stolen) to kwargs; on failure clears kwargs and returns NULL. */
static PyObject *
with_item(PyObject *kwargs, const char *name, PyObject *value)
{
    if (kwargs == NULL || value == NULL || PyDict_SetItemString(kwargs, name, value) < 0) {
        Py_XDECREF(kwargs);
        Py_XDECREF(value);
        return NULL;
    }
    Py_DECREF(value);
    return kwargs;
}

static int
fail_size(Framer *self, Py_ssize_t size)
{
    self->state = FAILED;
    drop_buffers(self);
    PyObject *message = PyUnicode_FromFormat(
        "a pending event reached %zd bytes, over max_event_bytes=%zd", size,
        self->max_event_bytes);
    PyObject *kwargs = error_kwargs(self);
    kwargs = with_item(kwargs, "limit", PyLong_FromSsize_t(self->max_event_bytes));
    kwargs = with_item(kwargs, "size", PyLong_FromSsize_t(size));
    return raise_with(too_large_exc, message, kwargs);
}

static int
fail_limit(Framer *self, const char *name, Py_ssize_t limit, Py_ssize_t size, const char *unit)
{
    self->state = FAILED;
    drop_buffers(self);
    PyObject *message = PyUnicode_FromFormat(
        "the stream crossed %s: %zd %s, over %zd", name, size, unit, limit);
    PyObject *kwargs = error_kwargs(self);
    kwargs = with_item(kwargs, "limit_name", PyUnicode_FromString(name));
    kwargs = with_item(kwargs, "limit", PyLong_FromSsize_t(limit));
    kwargs = with_item(kwargs, "size", PyLong_FromSsize_t(size));
    return raise_with(limit_exc, message, kwargs);
}

/* The pure twin's words (sse.py's _reentered). */
static PyObject *
usage_reentered(void)
{
    PyErr_SetString(usage_exc,
                    "the framer was called from inside its own feed() or finish() (a finalizer "
                    "or a callback run during it): a framer is not re-entrant");
    return NULL;
}

static PyObject *
usage_state(Framer *self)
{
    PyErr_Format(usage_exc, "the framer has %s; it takes no more input", state_names[self->state]);
    return NULL;
}

/* Only our exceptions leave the core, whatever the bytes (STYLE.md 6): anything else (a
 * MemoryError) becomes a FramingError, as the pure twin's net does. */
static PyObject *
translate_error(Framer *self)
{
    if (PyErr_ExceptionMatches(base_exc)) {
        return NULL;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    self->state = FAILED;
    drop_buffers(self);
    PyObject *message = PyUnicode_FromFormat(
        "the framer failed on its input (%s: %S)", ((PyTypeObject *)type)->tp_name,
        value ? value : Py_None);
    if (message != NULL) {
        PyObject *exc = PyObject_CallOneArg(framing_exc, message);
        Py_DECREF(message);
        if (exc != NULL) {
            if (value != NULL) {
                PyException_SetCause(exc, Py_NewRef(value));
            }
            PyErr_SetObject(framing_exc, exc);
            Py_DECREF(exc);
        }
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return NULL;
}

/* ---------------------------------------------------------------------------------- */

static PyObject *
decode(const char *s, Py_ssize_t n)
{
    if (n == 0) {
        return Py_NewRef(str_empty);
    }
    return PyUnicode_DecodeUTF8(s, n, "replace");
}

/* Eight bytes at p, wherever they are aligned. */
static inline uint64_t
load_u64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Whether the last n < 16 bytes at s hold a byte with its high bit set: two words that
 * may overlap (the same byte tested twice is harmless in an OR), else byte by byte. */
static inline int
short_high(const char *s, Py_ssize_t n)
{
    const uint64_t high = 0x8080808080808080ull;
    if (n >= 8) {
        return ((load_u64(s) | load_u64(s + n - 8)) & high) != 0;
    }
    unsigned char any = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        any |= (unsigned char)s[i];
    }
    return (any & 0x80) != 0;
}

/* Whether n bytes are all ASCII: 64 bytes a step (an OR of the words, one test of their
 * high bits), so a non-ASCII line stops within 64 bytes of its first such byte. */
static int
all_ascii(const char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
#if defined(__SSE2__)
    /* Every x86-64 has SSE2: four 16-byte loads, three ORs and one test of the high
     * bits per 64 bytes (gcc -O2 does not vectorise a word loop). */
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) {
            return 0;
        }
    }
    for (; i + 16 <= n; i += 16) {
        if (_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(s + i)))) {
            return 0;
        }
    }
    if (i < n && n >= 16) {
        /* The last 16 bytes, overlapping those already seen: one load, not a word loop
         * and a byte loop (those were 84 instructions of a W4 Chat feed, callgrind). */
        return _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(s + n - 16))) == 0;
    }
#else
    const uint64_t high = 0x8080808080808080ull;
    for (; i + 16 <= n; i += 16) {
        uint64_t w[2];
        memcpy(w, s + i, 16);  /* unaligned loads, as the compiler likes them */
        if ((w[0] | w[1]) & high) {
            return 0;
        }
    }
#endif
    return !short_high(s + i, n - i);
}

/* One pass over a chunk (after a CRLF's split LF is dropped) for the two facts
 * feed_bytes needs of all its bytes: whether any is a CR (its lines are normalised
 * first) and whether all are ASCII (then no data line needs a check of its own). No
 * early exit: the CR test has to see every byte anyway. Returns SCAN_HIGH | SCAN_CR bits.
 * For the reads feed_whole_lines does not take (something pending, the stream's first
 * read, a stream with CRs). In a W4 Chat read it replaced a memchr for the CR over the
 * chunk (99 instructions a feed) and the data lines' ASCII checks (164), for 136 (AVX2;
 * callgrind); feed_whole_lines then took that read without it. Three versions
 * with the same result (tests/test_sse_c_scan.py runs each this machine can): AVX2 where
 * the CPU has it, SSE2 (every x86-64), and byte by byte elsewhere. A bitmap of the LFs
 * from the same pass, instead of a memchr per line, did not pay: 2,660,000 against
 * 2,567,000 instructions for the scan and the line loop (the same W4 Chat run). */
enum { SCAN_HIGH = 1, SCAN_CR = 2 };
typedef int (*scan_fn)(const char *s, Py_ssize_t n);

/* Chunks up to this many bytes are scanned so; a larger one (W1's 16 KiB reads) keeps
 * memchr for its CRs (as fast over many bytes) and each data line checks its own. */
#define SCAN_CHUNK_MAX_BYTES 4096

static int
scan_bytes(const char *s, Py_ssize_t n)
{
    unsigned char bits = 0;
    int cr = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        bits |= (unsigned char)s[i];
        cr |= s[i] == '\r';
    }
    return (bits & 0x80 ? SCAN_HIGH : 0) | (cr ? SCAN_CR : 0);
}

#if defined(__SSE2__)
static int
scan_sse2(const char *s, Py_ssize_t n)
{
    if (n < 16) {
        return scan_bytes(s, n);
    }
    const __m128i cr = _mm_set1_epi8('\r');
    __m128i bits = _mm_setzero_si128();
    __m128i crs = _mm_setzero_si128();
    Py_ssize_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(s + i + 48));
        bits = _mm_or_si128(bits, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)));
        crs = _mm_or_si128(
            crs, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(a, cr), _mm_cmpeq_epi8(b, cr)),
                              _mm_or_si128(_mm_cmpeq_epi8(c, cr), _mm_cmpeq_epi8(d, cr))));
    }
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        bits = _mm_or_si128(bits, a);
        crs = _mm_or_si128(crs, _mm_cmpeq_epi8(a, cr));
    }
    if (i < n) {
        /* The last 16 bytes, overlapping: an OR sees a byte twice, harmlessly. */
        __m128i a = _mm_loadu_si128((const __m128i *)(s + n - 16));
        bits = _mm_or_si128(bits, a);
        crs = _mm_or_si128(crs, _mm_cmpeq_epi8(a, cr));
    }
    return (_mm_movemask_epi8(bits) ? SCAN_HIGH : 0) | (_mm_movemask_epi8(crs) ? SCAN_CR : 0);
}
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_SCAN_AVX2 1
/* Built for AVX2 whatever the compiler's flags; called only where the CPU has it. */
__attribute__((target("avx2"))) static int
scan_avx2(const char *s, Py_ssize_t n)
{
    if (n < 32) {
        return scan_bytes(s, n);
    }
    const __m256i cr = _mm256_set1_epi8('\r');
    __m256i bits = _mm256_setzero_si256();
    __m256i crs = _mm256_setzero_si256();
    Py_ssize_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        bits = _mm256_or_si256(bits, _mm256_or_si256(a, b));
        crs = _mm256_or_si256(crs, _mm256_or_si256(_mm256_cmpeq_epi8(a, cr),
                                                   _mm256_cmpeq_epi8(b, cr)));
    }
    if (i + 32 <= n) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        bits = _mm256_or_si256(bits, a);
        crs = _mm256_or_si256(crs, _mm256_cmpeq_epi8(a, cr));
        i += 32;
    }
    if (i < n) {
        /* The last 32 bytes, overlapping: an OR sees a byte twice, harmlessly. */
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + n - 32));
        bits = _mm256_or_si256(bits, a);
        crs = _mm256_or_si256(crs, _mm256_cmpeq_epi8(a, cr));
    }
    return (_mm256_movemask_epi8(bits) ? SCAN_HIGH : 0)
           | (_mm256_testz_si256(crs, crs) ? 0 : SCAN_CR);
}
#endif

/* The end of a line and whether its bytes are ASCII, in one pass. Returns the first LF
 * or CR at or after p before stop, or stop; *ascii is whether the bytes before it are
 * all ASCII. A CR reaches it only in feed_whole_lines' reads (elsewhere the bytes are
 * normalised first), where it sends the rest of the read to the general path.
 *
 * The vector versions test each byte once, signed: below 14 are the controls up to CR
 * (LF among them) and every byte of 0x80 and up. A block without one is skipped at two
 * instructions; in a JSON data line the first one found is usually its LF. After the
 * line's first high byte only the LF and the CR are looked for (a line of Cyrillic or
 * CJK text would stop at each of its bytes). For a W4 Chat read this pass replaced a
 * pass over the read for its CRs and high bytes (scan_chunk) and a memchr per line:
 * 241 -> 148 instructions a feed, the feed 1,819 -> 1,619 (callgrind); the LF and CR
 * tests and the high bits gathered apart, as before, took 223. Versions as
 * scan_chunk's, chosen with it. */
typedef const char *(*line_fn)(const char *p, const char *stop, int *ascii);

static const char *
line_end_bytes(const char *p, const char *stop, int *ascii)
{
    unsigned char bits = 0;
    for (; p < stop && *p != '\n' && *p != '\r'; p++) {
        bits |= (unsigned char)*p;
    }
    *ascii = !(bits & 0x80);
    return p;
}

/* What a vector version does at the flagged bytes of one block (bit i: the byte at
 * p + i): the LF or CR that ends the line, or the first high byte, after which the
 * rest of the line is searched by `after_high`. Other controls (a TAB) are passed. */
#define LINE_END_FLAGGED(p, mask, after_high, stop)                                     \
    do {                                                                                \
        uint32_t m_ = (mask);                                                           \
        while (m_) {                                                                    \
            const char *at_ = (p) + __builtin_ctz(m_);                                  \
            if (*at_ == '\n' || *at_ == '\r') {                                         \
                *ascii = 1;                                                             \
                return at_;                                                             \
            }                                                                           \
            if (*at_ & 0x80) {                                                          \
                *ascii = 0;                                                             \
                return after_high(at_, (stop));                                         \
            }                                                                           \
            m_ &= m_ - 1;                                                               \
        }                                                                               \
    } while (0)

/* The first LF or CR at or after p before stop, or stop: the vector searches' tail. */
static inline const char *
crlf_bytes(const char *p, const char *stop)
{
    while (p < stop && *p != '\n' && *p != '\r') {
        p++;
    }
    return p;
}

#if defined(__SSE2__)
/* The first LF or CR at or after p before stop, or stop. */
static const char *
crlf_sse2(const char *p, const char *stop)
{
    const __m128i lf = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r');
    for (; stop - p >= 16; p += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(a, lf), _mm_cmpeq_epi8(a, cr)));
        if (m) {
            return p + __builtin_ctz(m);
        }
    }
    return crlf_bytes(p, stop);
}

static const char *
line_end_sse2(const char *p, const char *stop, int *ascii)
{
    const char *start = p;
    const __m128i below = _mm_set1_epi8(14);
    for (; stop - p >= 16; p += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        LINE_END_FLAGGED(p, (uint32_t)_mm_movemask_epi8(_mm_cmpgt_epi8(below, a)), crlf_sse2,
                         stop);
    }
    if (p < stop && stop - start >= 16) {
        /* The last bytes, in the 16 ending at stop: the ones already seen shifted out. */
        unsigned skip = (unsigned)(16 - (stop - p));
        __m128i a = _mm_loadu_si128((const __m128i *)(stop - 16));
        LINE_END_FLAGGED(p, (uint32_t)_mm_movemask_epi8(_mm_cmpgt_epi8(below, a)) >> skip,
                         crlf_sse2, stop);
        *ascii = 1;
        return stop;
    }
    return line_end_bytes(p, stop, ascii);
}
#endif

#if defined(HAVE_SCAN_AVX2)
__attribute__((target("avx2"))) static const char *
crlf_avx2(const char *p, const char *stop)
{
    const __m256i lf = _mm256_set1_epi8('\n');
    const __m256i cr = _mm256_set1_epi8('\r');
    for (; stop - p >= 32; p += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        uint32_t m = (uint32_t)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_cmpeq_epi8(a, lf), _mm256_cmpeq_epi8(a, cr)));
        if (m) {
            return p + __builtin_ctz(m);
        }
    }
#if defined(__SSE2__)
    return crlf_sse2(p, stop);
#else
    return crlf_bytes(p, stop);
#endif
}

__attribute__((target("avx2"))) static const char *
line_end_avx2(const char *p, const char *stop, int *ascii)
{
    const char *start = p;
    const __m256i below = _mm256_set1_epi8(14);
    /* 64 bytes a step while nothing is flagged: W1's 16 KiB data lines. */
    for (; stop - p >= 64; p += 64) {
        __m256i a = _mm256_cmpgt_epi8(below, _mm256_loadu_si256((const __m256i *)p));
        __m256i b = _mm256_cmpgt_epi8(below, _mm256_loadu_si256((const __m256i *)(p + 32)));
        __m256i either = _mm256_or_si256(a, b);
        if (!_mm256_testz_si256(either, either)) {
            LINE_END_FLAGGED(p, (uint32_t)_mm256_movemask_epi8(a), crlf_avx2, stop);
            LINE_END_FLAGGED(p + 32, (uint32_t)_mm256_movemask_epi8(b), crlf_avx2, stop);
        }
    }
    for (; stop - p >= 32; p += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        LINE_END_FLAGGED(p, (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(below, a)),
                         crlf_avx2, stop);
    }
    if (p < stop && stop - start >= 32) {
        uint32_t skip = (uint32_t)(32 - (stop - p));
        __m256i a = _mm256_loadu_si256((const __m256i *)(stop - 32));
        LINE_END_FLAGGED(p, (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(below, a)) >> skip,
                         crlf_avx2, stop);
        *ascii = 1;
        return stop;
    }
#if defined(__SSE2__)
    return line_end_sse2(p, stop, ascii); /* under 32 bytes in all */
#else
    return line_end_bytes(p, stop, ascii);
#endif
}
#endif

#if defined(__SSE2__)
static scan_fn scan_chunk = scan_sse2;
static line_fn line_end = line_end_sse2;
#else
static scan_fn scan_chunk = scan_bytes;
static line_fn line_end = line_end_bytes;
#endif

/* The index of the first byte at or after i below n with its high bit set, or n. */
static inline Py_ssize_t
next_high(const char *s, Py_ssize_t i, Py_ssize_t n)
{
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(s + i)));
        if (m) {
            return i + __builtin_ctz(m);
        }
    }
#endif
    while (i < n && !((unsigned char)s[i] & 0x80)) {
        i++;
    }
    return i;
}

/* The n bytes at s widened to n UCS-2 code units (ASCII bytes: each is its character). */
static inline void
widen_ascii(Py_UCS2 *out, const char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)(out + i), _mm_unpacklo_epi8(v, zero));
        _mm_storeu_si128((__m128i *)(out + i + 8), _mm_unpackhi_epi8(v, zero));
    }
#endif
    for (; i < n; i++) {
        out[i] = (unsigned char)s[i];
    }
}

/* The text of n bytes of UTF-8 whose non-ASCII characters are all two- and three-byte
 * sequences (U+0080 to U+FFFF: accented Latin, Greek, Cyrillic, CJK, symbols), the most
 * a non-ASCII line of a real stream usually holds; NULL with no error set when a byte is
 * anything else (a four-byte sequence, an invalid one: the full decoder's case). Two
 * passes, the ASCII runs skipped and copied 16 bytes at a time. CPython's decoder took
 * 1,930 instructions for each two-byte line of a W4 Responses read and 5,240 for each
 * line with a three-byte character (it widens its buffer and copies the text again when
 * it meets one; callgrind), a tenth of the reads. The result is of the kind CPython's
 * own would be: one byte a character when every lead byte is C2 or C3 (below U+0100),
 * two otherwise (a lead C4 to DF is U+0100 or above; E0 to EF with a valid sequence
 * U+0800 or above). C0 and C1 and E0 80-9F are overlong encodings, ED A0-BF surrogates:
 * refused, as are a truncated sequence and a stray continuation byte.
 * tests/test_sse_c_utf8.py holds it to bytes.decode. */
static PyObject *
decode_bmp_utf8(const char *s, Py_ssize_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    Py_ssize_t extra = 0; /* continuation bytes: the text is n - extra characters */
    unsigned char top = 0;
    for (Py_ssize_t i = next_high(s, 0, n); i < n; i = next_high(s, i, n)) {
        unsigned char lead = u[i];
        if (lead >= 0xC2 && lead <= 0xDF) {
            if (i + 1 >= n || (u[i + 1] & 0xC0) != 0x80) {
                return NULL;
            }
            i += 2;
            extra += 1;
        }
        else if (lead >= 0xE0 && lead <= 0xEF) {
            if (i + 2 >= n || (u[i + 1] & 0xC0) != 0x80 || (u[i + 2] & 0xC0) != 0x80
                || (lead == 0xE0 && u[i + 1] < 0xA0) || (lead == 0xED && u[i + 1] >= 0xA0)) {
                return NULL;
            }
            i += 3;
            extra += 2;
        }
        else {
            return NULL;
        }
        top = lead > top ? lead : top;
    }
    if (extra == 0) {
        return NULL; /* all ASCII: not this function's case (a str's kind must fit) */
    }
    Py_ssize_t len = n - extra;
    PyObject *v = PyUnicode_New(len, top <= 0xC3 ? 0xFF : 0xFFFF);
    if (v == NULL) {
        return NULL;
    }
    Py_ssize_t i = 0;
    if (top <= 0xC3) {
        Py_UCS1 *out = PyUnicode_1BYTE_DATA(v);
        while (i < n) {
            Py_ssize_t j = next_high(s, i, n);
            memcpy(out, s + i, (size_t)(j - i));
            out += j - i;
            if (j >= n) {
                break;
            }
            *out++ = (Py_UCS1)(((u[j] & 0x1F) << 6) | (u[j + 1] & 0x3F));
            i = j + 2;
        }
    }
    else {
        Py_UCS2 *out = PyUnicode_2BYTE_DATA(v);
        while (i < n) {
            Py_ssize_t j = next_high(s, i, n);
            widen_ascii(out, s + i, j - i);
            out += j - i;
            if (j >= n) {
                break;
            }
            if (u[j] < 0xE0) {
                *out++ = (Py_UCS2)(((u[j] & 0x1F) << 6) | (u[j + 1] & 0x3F));
                i = j + 2;
            }
            else {
                *out++ = (Py_UCS2)(((u[j] & 0x0F) << 12) | ((u[j + 1] & 0x3F) << 6)
                                   | (u[j + 2] & 0x3F));
                i = j + 3;
            }
        }
    }
    return v;
}

/* A new str of the n > 0 ASCII bytes at s.
 *
 * On 3.11 (a release build) it is made here as PyUnicode_New makes a compact ASCII str:
 * one block holding the header, the bytes and a NUL, without PyUnicode_New's checks of
 * the size and the widest character, its branches for the other kinds and
 * _Py_NewReference (whose one other job, in a release build, is to give tracemalloc the
 * traceback it has just recorded for the block). A W4 Chat feed went from 1,935 to 1,853
 * instructions, W1 at 16 KiB from 38,615 to 36,101 a read (callgrind). The header's
 * layout is 3.11's (3.12 dropped `ready` and `wstr`); other versions call
 * PyUnicode_New. */
static inline PyObject *
new_ascii(const char *s, Py_ssize_t n)
{
#if !defined(Py_LIMITED_API) && !defined(Py_DEBUG) && !defined(Py_TRACE_REFS)                \
    && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    if ((size_t)n > (size_t)PY_SSIZE_T_MAX - sizeof(PyASCIIObject) - 1) {
        return PyErr_NoMemory();
    }
    PyASCIIObject *v = PyObject_Malloc(sizeof(PyASCIIObject) + (size_t)n + 1);
    if (v == NULL) {
        return PyErr_NoMemory();
    }
    Py_SET_TYPE(v, &PyUnicode_Type); /* a static type: no reference to take */
    Py_SET_REFCNT(v, 1);
    v->length = n;
    v->hash = -1;
    memset(&v->state, 0, sizeof(v->state));
    v->state.kind = PyUnicode_1BYTE_KIND;
    v->state.compact = 1;
    v->state.ascii = 1;
    v->state.ready = 1;
    v->wstr = NULL;
    char *data = (char *)(v + 1);
    memcpy(data, s, (size_t)n);
    data[n] = '\0';
    return (PyObject *)v;
#else
    PyObject *v = PyUnicode_New(n, 127);
    if (v != NULL) {
        memcpy(PyUnicode_DATA(v), s, (size_t)n);
    }
    return v;
#endif
}

/* Lines up to this many bytes keep their UTF-8 with their text (decode_data_rest). */
#define KEEP_UTF8_MAX_BYTES (64 * 1024)

/* A data line's value, which a dialect will parse as JSON: orjson.loads(str) asks for
 * the str's UTF-8 (PyUnicode_AsUTF8AndSize), which CPython makes by encoding the text
 * again and keeps in the str. These bytes are that UTF-8 when they decode without
 * replacement (strict UTF-8 is one-to-one), so they are kept there now: a copy instead
 * of an encode, the memory orjson would have taken anyway. The encode was 198,000 of a
 * Gemini W4 run's 1,920,000 instructions (callgrind), on every non-ASCII event of
 * every dialect. Past KEEP_UTF8_MAX_BYTES a framer-only caller's memory matters more
 * (W3's peak), and the text stays as decode() makes it.
 *
 * decode_data's every case but the usual one (known ASCII, not empty). */
static PyObject *
decode_data_rest(const char *s, Py_ssize_t n, int ascii)
{
    if (n > 0 && ascii == 0 && all_ascii(s, n)) {
        return new_ascii(s, n);
    }
#if !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
    if (n > 0 && n <= KEEP_UTF8_MAX_BYTES) {
        PyObject *v = decode_bmp_utf8(s, n);
        if (v == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            v = PyUnicode_DecodeUTF8(s, n, NULL);
        }
        if (v == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                return NULL;
            }
            PyErr_Clear();
            return decode(s, n);
        }
        /* An ASCII str's UTF-8 is its own data; a fresh str has no UTF-8 yet. */
        PyCompactUnicodeObject *c = (PyCompactUnicodeObject *)v;
        if (!PyUnicode_IS_ASCII(v) && c->utf8 == NULL) {
            char *utf8 = PyObject_Malloc((size_t)n + 1);
            if (utf8 == NULL) {
                Py_DECREF(v);
                return PyErr_NoMemory();
            }
            memcpy(utf8, s, (size_t)n);
            utf8[n] = '\0';
            /* Freed by the str's dealloc with PyObject_Free, as CPython's own copy is. */
            c->utf8 = utf8;
            c->utf8_length = n;
        }
        return v;
    }
#endif
    return decode(s, n);
}

/* A data line's value as a str; `ascii`: 1 when the bytes are known ASCII, -1 when known
 * not to be, 0 unknown. An ASCII line's text is its bytes: one check and one copy
 * instead of the decoder's combined pass, which was a sixth of a W4 Chat feed's
 * instructions (callgrind). The usual line, known ASCII, is made here, in its caller:
 * the call into a function that also holds every other case (its saved registers) was
 * 14 instructions a line of a W4 Anthropic feed. */
HOT_INLINE PyObject *
decode_data(const char *s, Py_ssize_t n, int ascii)
{
    if (ascii > 0 && n > 0) {
        return new_ascii(s, n);
    }
    return decode_data_rest(s, n, ascii);
}

/* The event class's deallocator, and a free list of the events it frees.
 *
 * A NamedTuple is a heap type, freed by CPython's generic subtype_dealloc, which looks
 * for finalizers, slots, a __dict__ and weak references before it calls the tuple's own
 * dealloc; the allocation tracked and linked each event for the collector. Both were
 * about 470 instructions of each event framed (W1 at 16 KiB: subtype_dealloc,
 * tupledealloc, GC_NewVar, GC_Link and GC_Del; callgrind), more than its parsing. The
 * class adds nothing to a tuple (_setup() checks it), so its instances are freed here as
 * a tuple is, and an event the framer made (never tracked, four items) is kept for the
 * next dispatch instead. The usual consumer (the parser) drops each event before the
 * next one comes, so the list rarely holds more than one; one that keeps a whole stream's
 * events and then drops them (`events += framer.feed(read)`, the benchmarks' framing
 * runs) gets them all back up to EVENT_FREE_MAX. At 2,000 (CPython's bound for its own
 * tuples) a W4 run's 2,900 events took 900 fresh allocations a pass, 150 instructions a
 * feed (callgrind: 2,288 -> 2,140 for Chat at 4,096); the most it keeps is 4,096 events
 * of 72 bytes, 288 KiB. Everything else (an event built in Python, a
 * subclass's instance, which subtype_dealloc hands here as its base's dealloc) takes
 * the general path, with the trashcan for deep nesting as tuples have it.
 *
 * Not in debug builds (the reference totals count allocations) nor from 3.14, whose
 * tuples cache their hash in the object. */
#if !defined(Py_DEBUG) && !defined(Py_TRACE_REFS) && PY_VERSION_HEX < 0x030E0000
#define EVENT_FREE_LIST 1
#define EVENT_FREE_MAX 4096
static PyObject *event_free[EVENT_FREE_MAX];
static int event_nfree;
#endif

static void
event_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
#if defined(EVENT_FREE_LIST)
    /* The framer's own events first: never tracked, four items that are str, str, str
     * and int or None (no nesting, so no trashcan), the class without a finalizer. */
    if (tp == (PyTypeObject *)event_type_obj && tp->tp_finalize == NULL && Py_SIZE(op) == 4
        && !PyObject_GC_IsTracked(op)) {
        Py_DECREF(PyTuple_GET_ITEM(op, 0));
        Py_DECREF(PyTuple_GET_ITEM(op, 1));
        Py_DECREF(PyTuple_GET_ITEM(op, 2));
        Py_DECREF(PyTuple_GET_ITEM(op, 3));
        if (event_nfree < EVENT_FREE_MAX) {
            event_free[event_nfree++] = op;
        }
        else {
            tp->tp_free(op);
        }
        Py_DECREF(tp); /* a heap type's instance holds a reference to it */
        return;
    }
#endif
    if (tp->tp_finalize != NULL && tp->tp_dealloc == event_dealloc) {
        /* A __del__ given to the class after _setup(): it runs first, as it would. */
        if (PyObject_CallFinalizerFromDealloc(op) < 0) {
            return; /* resurrected */
        }
    }
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, event_dealloc)
    for (Py_ssize_t i = Py_SIZE(op); --i >= 0;) {
        Py_XDECREF(PyTuple_GET_ITEM(op, i));
    }
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

/* A new event of the class with these four items (references stolen); NULL and the
 * items released on failure. */
static inline PyObject *
new_event(PyObject *kind, PyObject *data, PyObject *id, PyObject *retry)
{
    PyTypeObject *tp = (PyTypeObject *)event_type_obj;
    PyObject *event;
#if defined(EVENT_FREE_LIST)
    if (event_nfree && tp->tp_dealloc == event_dealloc) {
        event = event_free[--event_nfree];
        Py_SET_TYPE(event, tp);
        Py_INCREF(tp);
        Py_SET_REFCNT(event, 1);
    }
    else
#endif
    {
        /* A NamedTuple instance is a tuple of the subclass (_setup() checked that it
         * adds no fields of its own), made as tuple.__new__ makes one but without what
         * tp_alloc adds: the zeroing of the items, set just below, and the collector's
         * tracking. Its items are str, str, str and int or None, so it can never be part
         * of a cycle and is never tracked (CPython untracks such tuples itself, but only
         * once a collection has scanned them). tp_alloc, its tracking and the untracking
         * were 232 instructions an event (callgrind, W4 Chat). */
        event = (PyObject *)PyObject_GC_NewVar(PyObject, tp, 4);
        if (event == NULL) {
            Py_DECREF(kind);
            Py_DECREF(data);
            Py_DECREF(id);
            Py_DECREF(retry);
            return NULL;
        }
    }
    PyTuple_SET_ITEM(event, 0, kind);
    PyTuple_SET_ITEM(event, 1, data);
    PyTuple_SET_ITEM(event, 2, id);
    PyTuple_SET_ITEM(event, 3, retry);
    return event;
}

/* "If the line is empty (a blank line): Dispatch the event." */
HOT_INLINE int
dispatch(Framer *self)
{
    /* Each of these three is usually the object it is set to already (one id for the
     * stream, no event type, no retry): tested first, 14 instructions an event. */
    if (self->last_event_id != self->id_buffer) {
        Py_SETREF(self->last_event_id, Py_NewRef(self->id_buffer));
    }
    Py_ssize_t count = self->nvals;
    if (count) {
        if (count > max_data_lines) {
            return fail_limit(self, "MAX_DATA_LINES_PER_EVENT", max_data_lines, count, "lines");
        }
        PyObject *data;
        if (count == 1) {
            /* The array's reference moves into the event. */
            data = self->vals[0];
            self->nvals = 0;
        }
        else {
            PyObject *parts = PyTuple_New(count);
            if (parts == NULL) {
                return -1;
            }
            for (Py_ssize_t i = 0; i < count; i++) {
                PyTuple_SET_ITEM(parts, i, self->vals[i]);
            }
            self->nvals = 0;
            data = PyUnicode_Join(str_lf, parts);
            Py_DECREF(parts);
            if (data == NULL) {
                return -1;
            }
        }
        PyObject *kind = PyUnicode_GET_LENGTH(self->event_type) ? self->event_type : str_message;
        PyObject *event = new_event(Py_NewRef(kind), data, Py_NewRef(self->last_event_id),
                                    Py_NewRef(self->block_retry));
        if (event == NULL) {
            return -1;
        }
        if (push_ref(&self->out, &self->nout, &self->ocap, event) < 0) {
            return -1;
        }
    }
    if (self->event_type != str_empty) {
        Py_SETREF(self->event_type, Py_NewRef(str_empty));
    }
    if (self->block_retry != Py_None) {
        Py_SETREF(self->block_retry, Py_NewRef(Py_None));
    }
    return 0;
}

/* The events of this feed as a new list; the framer's array is left empty. */
static PyObject *
take_events(Framer *self)
{
    PyObject *events = PyList_New(0);
    if (events == NULL) {
        clear_refs(self->out, &self->nout);
        return NULL;
    }
    if (self->nout) {
        /* The array becomes the list's own (a list's items are a PyMem block of
         * `allocated` slots, as push_ref's are): no copy, and no PyList_New(n), whose
         * zeroed allocation and the copy into it were 90 instructions of a W4 Chat feed
         * (callgrind). The next event allocates the framer a new array. */
        PyListObject *list = (PyListObject *)events;
        list->ob_item = self->out;
        list->allocated = self->ocap;
        Py_SET_SIZE(list, self->nout);
        self->out = NULL;
        self->nout = 0;
        self->ocap = 0;
    }
    return events;
}

/* Whether the n bytes at a and at b are the same: an event type's few bytes, compared
 * here eight at a time (the last eight may overlap the ones before) where a call to
 * libc's memcmp and its dispatch on the length were 25 instructions an event line of a
 * W4 Anthropic feed (callgrind). */
static inline int
same_bytes(const char *a, const char *b, Py_ssize_t n)
{
    if (n < 8) {
        for (Py_ssize_t i = 0; i < n; i++) {
            if (a[i] != b[i]) {
                return 0;
            }
        }
        return 1;
    }
    for (Py_ssize_t i = 0; i + 8 < n; i += 8) {
        if (load_u64(a + i) != load_u64(b + i)) {
            return 0;
        }
    }
    return load_u64(a + n - 8) == load_u64(b + n - 8);
}

/* "If the field name is "event": Set the event type buffer to field value."
 *
 * A stream names a few event types over and over (Anthropic's and Responses' every
 * event): the last one's str is reused when the bytes are the same, ASCII text being its
 * bytes. Decoding each was a quarter of a W4 Anthropic feed's instructions (callgrind). */
HOT_INLINE int
event_field(Framer *self, const char *value, Py_ssize_t vlen)
{
    PyObject *seen = self->type_seen;
    if (seen != NULL && PyUnicode_GET_LENGTH(seen) == vlen
        && same_bytes(PyUnicode_DATA(seen), value, vlen)) {
        Py_SETREF(self->event_type, Py_NewRef(seen));
        return 0;
    }
    PyObject *v = decode(value, vlen);
    if (v == NULL) {
        return -1;
    }
    if (PyUnicode_IS_ASCII(v)) {
        Py_XSETREF(self->type_seen, Py_NewRef(v));
    }
    Py_SETREF(self->event_type, v);
    return 0;
}

/* One complete, non-empty line without its ending; `ascii`: what is known of its bytes
 * (decode_data's argument). */
HOT_INLINE int
line(Framer *self, const char *p, Py_ssize_t n, int ascii)
{
    const char *value;
    Py_ssize_t vlen;
    if (n >= 6 && memcmp(p, "data: ", 6) == 0) {
        /* The common case, taken before the general field split (same result). */
        PyObject *v = decode_data(p + 6, n - 6, ascii);
        if (v == NULL) {
            return -1;
        }
        return push_ref(&self->vals, &self->nvals, &self->vcap, v);
    }
    if (p[0] == ':') {
        /* "If the line starts with a U+003A COLON character (:): Ignore the line." */
        return 0;
    }
    if (n >= 7 && memcmp(p, "event: ", 7) == 0) {
        /* Every Anthropic and Responses event's first line: its value is known to start
         * after the space (the general split below gives the same). */
        return event_field(self, p + 7, n - 7);
    }
    Py_ssize_t nlen;
    const char *colon = memchr(p, ':', (size_t)n);
    if (colon != NULL) {
        /* "If the line contains a U+003A COLON character: ... If value starts with a
         * U+0020 SPACE character, remove it from value." */
        nlen = colon - p;
        value = colon + 1;
        vlen = n - nlen - 1;
        if (vlen && value[0] == ' ') {
            value++;
            vlen--;
        }
    }
    else {
        /* "Otherwise, ... using the whole line as the field name, and the empty string
         * as the field value." */
        nlen = n;
        value = p + n;
        vlen = 0;
    }
    if (nlen == 4 && memcmp(p, "data", 4) == 0) {
        PyObject *v = decode_data(value, vlen, ascii);
        if (v == NULL) {
            return -1;
        }
        return push_ref(&self->vals, &self->nvals, &self->vcap, v);
    }
    if (nlen == 5 && memcmp(p, "event", 5) == 0) {
        return event_field(self, value, vlen);
    }
    if (nlen == 2 && memcmp(p, "id", 2) == 0) {
        /* "If the field value does not contain U+0000 NULL, then set the last event ID
         * buffer to the field value. Otherwise, ignore the field." */
        if (memchr(value, 0, (size_t)vlen) == NULL) {
            PyObject *v = decode(value, vlen);
            if (v == NULL) {
                return -1;
            }
            Py_SETREF(self->id_buffer, v);
        }
        return 0;
    }
    if (nlen == 5 && memcmp(p, "retry", 5) == 0) {
        /* "If the field value consists of only ASCII digits, then interpret the field
         * value as an integer in base ten" (no sign, no space, not empty). */
        if (vlen == 0) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < vlen; i++) {
            if (value[i] < '0' || value[i] > '9') {
                return 0;
            }
        }
        if (vlen > max_retry_digits) {
            if (self->nvals > max_data_lines) {
                /* The data lines crossed their limit first, in stream order. */
                return fail_limit(self, "MAX_DATA_LINES_PER_EVENT", max_data_lines, self->nvals,
                                  "lines");
            }
            return fail_limit(self, "MAX_RETRY_DIGITS", max_retry_digits, vlen, "digits");
        }
        char digits[128];  /* max_retry_digits is checked below 128 by _setup() */
        memcpy(digits, value, (size_t)vlen);
        digits[vlen] = '\0';
        PyObject *v = PyLong_FromString(digits, NULL, 10);
        if (v == NULL) {
            return -1;
        }
        Py_SETREF(self->retry, Py_NewRef(v));
        Py_SETREF(self->block_retry, v);
        return 0;
    }
    /* "Otherwise: The field is ignored." */
    return 0;
}

/* The pure twin's _check_sizes: the first block of `head` (the first one continuing the
 * pending block) past max_event_bytes, each counting its lines with their endings but not
 * its blank line. Returns where it starts in head (after the blank line before it, so
 * head up to there is whole events), its size in *size; -1 when none is too big. */
static Py_ssize_t
first_too_large(Framer *self, const char *head, Py_ssize_t n, Py_ssize_t *size_out)
{
    Py_ssize_t start = 0;
    int first = 1;
    for (;;) {
        Py_ssize_t sep = -1;
        for (Py_ssize_t i = start; i + 1 < n; i++) {
            if (head[i] == '\n' && head[i + 1] == '\n') {
                sep = i;
                break;
            }
        }
        Py_ssize_t stop = sep < 0 ? n : sep;
        /* A part that opens with an LF opens with one more blank line: not its own. */
        Py_ssize_t size = stop - start + 1 - (stop > start && head[start] == '\n');
        if (sep < 0) {
            size -= 1;  /* the rest after the last LF LF already holds its line endings */
        }
        if (first && head[0] != '\n') {
            size += self->block_bytes;
        }
        first = 0;
        if (size > self->max_event_bytes) {
            *size_out = size;
            return start;
        }
        if (sep < 0) {
            return -1;
        }
        start = sep + 2;
    }
}

/* Below this many bytes of complete lines, s is copied behind the pending bytes whole:
 * the memchr that finds where the first line ends costs more than the copy it saves
 * (W1 at 64 B: 7,175,000 -> 7,363,000 instructions inside Framer_feed when every read
 * was split; callgrind). */
#define SPLIT_MIN_BYTES 256

/* The index in head = a then b of the last LF LF pair, or -1. */
static Py_ssize_t
last_blank(const char *a, Py_ssize_t na, const char *b, Py_ssize_t nb)
{
    for (Py_ssize_t i = nb - 2; i >= 0; i--) {
        if (b[i] == '\n' && b[i + 1] == '\n') {
            return na + i;
        }
    }
    if (na && nb && a[na - 1] == '\n' && b[0] == '\n') {
        return na - 1;
    }
    for (Py_ssize_t i = na - 2; i >= 0; i--) {
        if (a[i] == '\n' && a[i + 1] == '\n') {
            return i;
        }
    }
    return -1;
}

/* The n bytes at p, complete lines each ending with an LF, interpreted in order. */
static inline int
run_lines(Framer *self, const char *p, Py_ssize_t n, int ascii)
{
    const char *stop = p + n;
    while (p < stop) {
        if (*p == '\n') {
            /* A blank line, the one after each event's last line: no memchr call. */
            if (dispatch(self) < 0) {
                return -1;
            }
            p++;
            continue;
        }
        const char *lf;
        int line_ascii = 1;
        if (ascii) {
            lf = memchr(p, '\n', (size_t)(stop - p));
        }
        else {
            lf = line_end(p, stop, &line_ascii);
        }
        /* the bytes end with an LF, so lf is never stop (nor p: *p is not one) */
        if (line(self, p, lf - p, line_ascii ? 1 : -1) < 0) {
            return -1;
        }
        p = lf + 1;
    }
    return 0;
}

/* A read of whole lines (W4's one event per read, the usual network read of a stream)
 * with nothing pending: each line found and checked ASCII in one pass (line_end), with
 * no pass over the read first for its CRs and high bytes (scan_chunk) and no memchr per
 * line, which were 133 and 108 instructions of a W4 Chat feed (callgrind). A stream
 * that has sent a CR is normalised read by read instead (saw_cr): a Gemini event is
 * one CRLF-ended line, so each read would be scanned twice. The caller
 * has checked that no size limit can be passed, and checks the data lines' count, as
 * the general path does at the end of a read. Returns how many bytes it interpreted:
 * n, or the start of the first line that holds a CR, where the general path takes over
 * (as if the read had been split there); -1 on error. */
static Py_ssize_t
feed_whole_lines(Framer *self, const char *s, Py_ssize_t n)
{
    const char *p = s;
    const char *stop = s + n;
    const char *block = NULL; /* just past the last blank line */
    while (p < stop) {
        if (*p == '\n') {
            if (dispatch(self) < 0) {
                return -1;
            }
            block = ++p;
            continue;
        }
        int ascii;
        const char *lf = line_end(p, stop, &ascii);
        if (*lf == '\r') { /* never stop: the read ends with an LF */
            self->saw_cr = 1;
            break;
        }
        if (line(self, p, lf - p, ascii ? 1 : -1) < 0) {
            return -1;
        }
        p = lf + 1;
    }
    /* The pending block as the general path counts it: the bytes after the last blank
     * line, or all of them added to what was pending. */
    self->block_bytes = block != NULL ? p - block : self->block_bytes + (p - s);
    return p - s;
}

static PyObject *
feed_bytes(Framer *self, const char *s, Py_ssize_t n)
{
    char *normal = NULL;
    if (n == 0) {
        return PyList_New(0);
    }
    if (self->skip_lf) {
        /* A CR ended the previous chunk; an LF opening this one belongs to that CRLF. */
        self->skip_lf = 0;
        if (s[0] == '\n') {
            s++;
            n--;
            if (n == 0) {
                return PyList_New(0);
            }
        }
    }
    if (!self->pend_len && !self->saw_cr && self->bom_checked && s[n - 1] == '\n'
        && n + self->block_bytes <= self->max_event_bytes) {
        Py_ssize_t done = feed_whole_lines(self, s, n);
        if (done < 0) {
            goto error;
        }
        if (done == n) {
            if (self->nvals > max_data_lines) {
                fail_limit(self, "MAX_DATA_LINES_PER_EVENT", max_data_lines, self->nvals,
                           "lines");
                goto error;
            }
            return take_events(self);
        }
        s += done;
        n -= done;
    }
    int has_cr;
    int ascii = 0;
    if (n <= SCAN_CHUNK_MAX_BYTES) {
        int found = scan_chunk(s, n);
        ascii = !(found & SCAN_HIGH);
        has_cr = (found & SCAN_CR) != 0;
    }
    else {
        has_cr = memchr(s, '\r', (size_t)n) != NULL;
    }
    if (has_cr) {
        /* "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED
         * (CRLF) character pair, a single U+000A LINE FEED (LF) character, or a single
         * U+000D CARRIAGE RETURN (CR) character." Normalise to LF; a CR at the very end
         * may be the first half of a CRLF split across chunks. */
        self->skip_lf = s[n - 1] == '\r';
        self->saw_cr = 1;
        normal = PyMem_Malloc((size_t)n);
        if (normal == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        /* Run by run between CRs (memchr and memcpy), not byte by byte: Gemini's CRLF
         * body took 9 instructions a byte that way, the most of a feed (callgrind). */
        Py_ssize_t k = 0;
        Py_ssize_t i = 0;
        while (i < n) {
            const char *cr = memchr(s + i, '\r', (size_t)(n - i));
            Py_ssize_t j = cr == NULL ? n : cr - s;
            memcpy(normal + k, s + i, (size_t)(j - i));
            k += j - i;
            if (cr == NULL) {
                break;
            }
            normal[k++] = '\n';
            i = j + 1;
            if (i < n && s[i] == '\n') {
                i++;
            }
        }
        s = normal;
        n = k;
    }
    /* Just past the last LF, 0 if none. memrchr where the C library has it: byte by byte
     * it was 235 instructions of a W1 64-byte read, a third of it (callgrind). */
    Py_ssize_t end;
#if defined(__GLIBC__)
    if (s[n - 1] == '\n') {
        end = n;  /* a read of whole events (W4) */
    }
    else {
        const char *last_lf = memrchr(s, '\n', (size_t)n);
        end = last_lf == NULL ? 0 : last_lf + 1 - s;
    }
#else
    end = n;
    while (end > 0 && s[end - 1] != '\n') {
        end--;
    }
#endif
    if (end == 0) {
        /* No line ends here (most 64-byte chunks): keep the bytes and wait. */
        if (pend_append(self, s, n) < 0) {
            goto error;
        }
        if (self->pend_len + self->block_bytes > self->max_event_bytes) {
            /* The stream's first line is not counted with a BOM, nor with what may
             * still become one: fed whole, the BOM is stripped before any size is taken
             * (the pure twin's _without_bom). */
            Py_ssize_t size = self->pend_len + self->block_bytes;
            if (!self->bom_checked) {
                Py_ssize_t k = self->pend_len < 3 ? self->pend_len : 3;
                if (memcmp(self->pend, "\xef\xbb\xbf", (size_t)k) == 0) {
                    size -= k;
                }
            }
            if (size > self->max_event_bytes) {
                fail_size(self, size);
                goto error;
            }
        }
        PyMem_Free(normal);
        return PyList_New(0);
    }
    /* The complete lines, `head`, are seg1 then seg2: seg1 alone when the unfinished line
     * was empty (in place in s) or a size check may be due (all copied after it, as the
     * check reads one buffer); otherwise seg1 is that line completed (the pending bytes
     * and s up to its first LF) and seg2 the rest of s, read in place. Copying all of s
     * behind the pending bytes was 16 KiB of memcpy a W1 read. No line spans the two:
     * seg1 ends with an LF. */
    const char *seg1 = s;
    Py_ssize_t n1 = end;
    const char *seg2 = NULL;
    Py_ssize_t n2 = 0;
    int ascii2 = 0;
    if (self->pend_len) {
        Py_ssize_t take = end;
        if (end > SPLIT_MIN_BYTES
            && self->pend_len + end + self->block_bytes <= self->max_event_bytes) {
            take = (const char *)memchr(s, '\n', (size_t)end) + 1 - s;
            seg2 = s + take;
            n2 = end - take;
            ascii2 = ascii;  /* s was scanned; the pending bytes were not */
        }
        if (pend_append(self, s, take) < 0) {
            goto error;
        }
        seg1 = self->pend;
        n1 = self->pend_len;
        ascii = 0;
    }
    if (!self->bom_checked) {
        self->bom_checked = 1;
        /* The UTF-8 decode algorithm strips exactly one leading BOM, even when the network
         * split it: the first line is whole by now. */
        if (n1 >= 3 && memcmp(seg1, "\xef\xbb\xbf", 3) == 0) {
            seg1 += 3;
            n1 -= 3;
        }
    }
    Py_ssize_t head_len = n1 + n2;
    if (head_len + self->block_bytes > self->max_event_bytes) {
        /* n2 is 0 here: seg2 is only split off when no check can be due */
        Py_ssize_t size = 0;
        Py_ssize_t first = first_too_large(self, seg1, n1, &size);
        if (first >= 0) {
            /* The events before the first block too big come first in the stream: they
             * are read (one may cross a line limit first), then go with the error. A
             * first block opening with an LF has the pending block before it: that LF
             * is its blank line, which dispatches it. */
            Py_ssize_t before = first ? first : seg1[0] == '\n';
            if (before && run_lines(self, seg1, before, ascii) < 0) {
                goto error;
            }
            /* Then the block's lines that ended before it crossed the limit (fed byte
             * by byte, their limits would have been crossed first): those whose line
             * ending is among its first max_event_bytes bytes, the pending block's
             * included. */
            Py_ssize_t own = first ? first + (seg1[first] == '\n') : before;
            Py_ssize_t budget = self->max_event_bytes
                                - (first == 0 && seg1[0] != '\n' ? self->block_bytes : 0);
            Py_ssize_t stop = own + (budget < n1 - own ? budget : n1 - own);
            while (stop > own && seg1[stop - 1] != '\n') {
                stop--;
            }
            if (stop > own && run_lines(self, seg1 + own, stop - own, ascii) < 0) {
                goto error;
            }
            if (self->nvals > max_data_lines) {
                fail_limit(self, "MAX_DATA_LINES_PER_EVENT", max_data_lines, self->nvals,
                           "lines");
                goto error;
            }
            fail_size(self, size);
            goto error;
        }
    }
    /* The pending block after these lines, in bytes received: what follows the last
     * blank line (the pure twin's _feed counts it the same way, on the bytes). */
    Py_ssize_t block_bytes;
    Py_ssize_t last = last_blank(seg1, n1, seg2, n2);
    if (last >= 0) {
        block_bytes = head_len - last - 2;
    }
    else if ((n1 ? seg1[0] : seg2[0]) == '\n') {
        block_bytes = head_len - 1;
    }
    else {
        block_bytes = self->block_bytes + head_len;
    }
    if (run_lines(self, seg1, n1, ascii) < 0 || (n2 && run_lines(self, seg2, n2, ascii2) < 0)) {
        goto error;
    }
    if (self->nvals > max_data_lines) {
        fail_limit(self, "MAX_DATA_LINES_PER_EVENT", max_data_lines, self->nvals, "lines");
        goto error;
    }
    self->block_bytes = block_bytes;
    self->pend_len = 0;
    if (end < n) {
        if (pend_append(self, s + end, n - end) < 0) {
            goto error;
        }
        if (self->pend_len + self->block_bytes > self->max_event_bytes) {
            fail_size(self, self->pend_len + self->block_bytes);
            goto error;
        }
    }
    PyMem_Free(normal);
    return take_events(self);

error:
    PyMem_Free(normal);
    clear_refs(self->out, &self->nout);
    return translate_error(self);
}

/* ---------------------------------------------------------------------------------- */

static PyObject *
Framer_feed(Framer *self, PyObject *arg)
{
    if (!self->ready) {
        PyErr_SetString(usage_exc, "SSEFramer.__init__() was not called");
        return NULL;
    }
    if (self->busy) {
        return usage_reentered();
    }
    if (self->state != OPEN) {
        return usage_state(self);
    }
    PyObject *events;
    self->busy = 1;
    if (PyBytes_CheckExact(arg)) {
        events = feed_bytes(self, PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg));
        self->busy = 0;
        return events;
    }
    Py_buffer view;
    /* A buffer exporter's own code may run here too: still busy. */
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        self->busy = 0;
        self->state = FAILED;
        drop_buffers(self);
        PyErr_Format(usage_exc, "feed() takes bytes, not %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    /* A bytearray is locked against resizing while its buffer is held. */
    events = feed_bytes(self, view.buf, view.len);
    PyBuffer_Release(&view);
    self->busy = 0;
    return events;
}

static PyObject *finish_events(Framer *self, PyObject *unterminated);

static PyObject *
Framer_finish(Framer *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"unterminated", NULL};
    PyObject *unterminated = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:finish", kwlist, &unterminated)) {
        return NULL;
    }
    if (!self->ready) {
        PyErr_SetString(usage_exc, "SSEFramer.__init__() was not called");
        return NULL;
    }
    if (self->busy) {
        return usage_reentered();
    }
    if (self->state != OPEN) {
        return usage_state(self);
    }
    self->busy = 1;
    PyObject *out = finish_events(self, unterminated);
    self->busy = 0;
    if (out == NULL) {
        return NULL;
    }
    self->state = FINISHED;
    drop_buffers(self);
    return out;
}

/* finish()'s events: those of the unterminated last event the callback accepts. */
static PyObject *
finish_events(Framer *self, PyObject *unterminated)
{
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    if (unterminated != Py_None) {
        /* The blank line the server left out; its events are kept only when whole. */
        PyObject *events = feed_bytes(self, "\n\n", 2);
        if (events == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(events); i++) {
            PyObject *event = PyList_GET_ITEM(events, i);
            PyObject *verdict = PyObject_CallOneArg(unterminated, PyTuple_GET_ITEM(event, 1));
            int whole = verdict == NULL ? -1 : PyObject_IsTrue(verdict);
            Py_XDECREF(verdict);
            if (whole < 0) {
                Py_DECREF(events);
                Py_DECREF(out);
                return NULL;
            }
            if (!whole) {
                break;
            }
            if (PyList_Append(out, event) < 0) {
                Py_DECREF(events);
                Py_DECREF(out);
                return NULL;
            }
        }
        Py_DECREF(events);
    }
    return out;
}

static int
Framer_init(Framer *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"max_event_bytes", NULL};
    PyObject *limit = NULL;
    if (event_type_obj == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sse_toolcalls._sse_c._setup() was not called");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:SSEFramer", kwlist, &limit)) {
        return -1;
    }
    if (self->busy) {
        /* Re-initialised from inside its own feed(): the buffers being read would go. */
        usage_reentered();
        return -1;
    }
    Py_ssize_t max = default_max_event_bytes;
    if (limit != NULL) {
        /* _checks.check_count's rule and words: an int, not a bool (NaN or 2.5 is a slip). */
        if (PyBool_Check(limit) || !PyLong_Check(limit)) {
            PyErr_Format(usage_exc, "max_event_bytes: expected a whole number, got %R", limit);
            return -1;
        }
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(limit, &overflow);
        if (value == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (overflow < 0 || (!overflow && value < 1)) {
            PyErr_Format(usage_exc, "max_event_bytes: must be at least 1, got %R", limit);
            return -1;
        }
        /* Past PY_SSIZE_T_MAX no buffer could ever reach the limit anyway. */
        max = overflow || value > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (Py_ssize_t)value;
    }
    self->max_event_bytes = max;
    self->pend_len = 0;
    self->block_bytes = 0;
    self->skip_lf = 0;
    self->bom_checked = 0;
    self->saw_cr = 0;
    self->state = OPEN;
    clear_vals(self);
    clear_refs(self->out, &self->nout);
    Py_XSETREF(self->event_type, Py_NewRef(str_empty));
    Py_XSETREF(self->id_buffer, Py_NewRef(str_empty));
    Py_XSETREF(self->last_event_id, Py_NewRef(str_empty));
    Py_XSETREF(self->block_retry, Py_NewRef(Py_None));
    Py_XSETREF(self->retry, Py_NewRef(Py_None));
    self->ready = 1;
    return 0;
}

static void
Framer_dealloc(Framer *self)
{
    PyMem_Free(self->pend);
    clear_vals(self);
    PyMem_Free(self->vals);
    clear_refs(self->out, &self->nout);
    PyMem_Free(self->out);
    Py_XDECREF(self->event_type);
    Py_XDECREF(self->type_seen);
    Py_XDECREF(self->id_buffer);
    Py_XDECREF(self->last_event_id);
    Py_XDECREF(self->block_retry);
    Py_XDECREF(self->retry);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Framer_get_last_event_id(Framer *self, void *closure)
{
    return Py_NewRef(self->last_event_id ? self->last_event_id : str_empty);
}

static PyObject *
Framer_get_retry(Framer *self, void *closure)
{
    return Py_NewRef(self->retry ? self->retry : Py_None);
}

/* A copy in the same state: what the prefix-property tests do to fork a parser at every
 * byte (copy.deepcopy), and what the pure twin allows. Every held object is immutable
 * except the list of data values, which is copied. */
static PyObject *
Framer_copy(Framer *self, PyObject *unused)
{
    if (!self->ready) {
        PyErr_SetString(usage_exc, "SSEFramer.__init__() was not called");
        return NULL;
    }
    if (self->busy) {
        /* Half-way through a feed its state is not one a framer can be in. */
        return usage_reentered();
    }
    PyTypeObject *tp = Py_TYPE(self);
    Framer *copy = (Framer *)tp->tp_alloc(tp, 0);
    if (copy == NULL) {
        return NULL;
    }
    copy->max_event_bytes = self->max_event_bytes;
    copy->block_bytes = self->block_bytes;
    copy->skip_lf = self->skip_lf;
    copy->bom_checked = self->bom_checked;
    copy->saw_cr = self->saw_cr;
    copy->state = self->state;
    copy->ready = 1;
    copy->event_type = Py_NewRef(self->event_type);
    copy->id_buffer = Py_NewRef(self->id_buffer);
    copy->last_event_id = Py_NewRef(self->last_event_id);
    copy->block_retry = Py_NewRef(self->block_retry);
    copy->retry = Py_NewRef(self->retry);
    for (Py_ssize_t i = 0; i < self->nvals; i++) {
        if (push_ref(&copy->vals, &copy->nvals, &copy->vcap, Py_NewRef(self->vals[i])) < 0) {
            Py_DECREF(copy);
            return NULL;
        }
    }
    if (pend_append(copy, self->pend, self->pend_len) < 0) {
        Py_DECREF(copy);
        return NULL;
    }
    return (PyObject *)copy;
}

static PyMethodDef Framer_methods[] = {
    {"__copy__", (PyCFunction)Framer_copy, METH_NOARGS, "A framer in the same state."},
    {"__deepcopy__", (PyCFunction)Framer_copy, METH_O, "A framer in the same state."},
    {"feed", (PyCFunction)Framer_feed, METH_O,
     "Take the next bytes of the stream and return the events they complete."},
    {"finish", (PyCFunction)(void (*)(void))Framer_finish, METH_VARARGS | METH_KEYWORDS,
     "Declare the end of the stream; refuse further input."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Framer_getset[] = {
    {"last_event_id", (getter)Framer_get_last_event_id, NULL,
     "The last event ID string, as of the last blank line (\"\" if none).", NULL},
    {"retry", (getter)Framer_get_retry, NULL,
     "The reconnection time in ms from the last valid retry field, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef Framer_members[] = {
    {"max_event_bytes", T_PYSSIZET, offsetof(Framer, max_event_bytes), 0,
     "Bound on one pending event, in bytes; past it EventTooLargeError."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject FramerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sse_toolcalls.SSEFramer",
    .tp_basicsize = sizeof(Framer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Turns a byte stream into ServerSentEvent values, incrementally (compiled).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Framer_init,
    .tp_dealloc = (destructor)Framer_dealloc,
    .tp_methods = Framer_methods,
    .tp_getset = Framer_getset,
    .tp_members = Framer_members,
};

/* ---------------------------------------------------------------------------------- */

static PyObject *
setup(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {
        "event", "base", "usage", "framing", "too_large", "limit",
        "max_event_bytes", "max_retry_digits", "max_data_lines", NULL,
    };
    PyObject *event, *base, *usage, *framing, *too_large, *limit;
    Py_ssize_t max_event, digits, lines;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$O!O!O!O!O!O!nnn:_setup", kwlist,
                                     &PyType_Type, &event, &PyType_Type, &base, &PyType_Type,
                                     &usage, &PyType_Type, &framing, &PyType_Type, &too_large,
                                     &PyType_Type, &limit, &max_event, &digits, &lines)) {
        return NULL;
    }
    PyTypeObject *et = (PyTypeObject *)event;
    /* dispatch() makes its events with PyObject_GC_NewVar and sets only the items: the
     * class must add nothing to a tuple (a NamedTuple's __slots__ = ()). */
    if (!PyType_IsSubtype(et, &PyTuple_Type) || !PyType_HasFeature(et, Py_TPFLAGS_HAVE_GC)
        || et->tp_basicsize != PyTuple_Type.tp_basicsize
        || et->tp_itemsize != PyTuple_Type.tp_itemsize || et->tp_dictoffset != 0
        || et->tp_weaklistoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "event must be a tuple subclass with no fields of its own");
        return NULL;
    }
    if (digits < 1 || digits >= 128 || lines < 1 || max_event < 1) {
        PyErr_SetString(PyExc_ValueError, "limits out of range");
        return NULL;
    }
    /* The class's instances are freed by event_dealloc (above) when nothing of
     * subtype_dealloc's is needed: a Python class straight on tuple, no __del__. */
    if (et->tp_dealloc != event_dealloc && (et->tp_flags & Py_TPFLAGS_HEAPTYPE)
        && et->tp_base == &PyTuple_Type && et->tp_finalize == NULL && et->tp_del == NULL) {
        et->tp_dealloc = event_dealloc;
    }
    Py_XSETREF(event_type_obj, Py_NewRef(event));
    Py_XSETREF(base_exc, Py_NewRef(base));
    Py_XSETREF(usage_exc, Py_NewRef(usage));
    Py_XSETREF(framing_exc, Py_NewRef(framing));
    Py_XSETREF(too_large_exc, Py_NewRef(too_large));
    Py_XSETREF(limit_exc, Py_NewRef(limit));
    default_max_event_bytes = max_event;
    max_retry_digits = digits;
    max_data_lines = lines;
#if defined(HAVE_SCAN_AVX2)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        scan_chunk = scan_avx2;
        line_end = line_end_avx2;
    }
#endif
    Py_RETURN_NONE;
}

/* _scan_version(name=None): which version of scan_chunk and line_end runs ("avx2",
 * "sse2" or "bytes"), and with a name, run that one instead: the tests hold each version this
 * machine can run to the pure twin. */
static PyObject *
scan_version(PyObject *module, PyObject *args)
{
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|z:_scan_version", &name)) {
        return NULL;
    }
    const char *current = scan_chunk == scan_bytes ? "bytes" : "sse2";
#if defined(HAVE_SCAN_AVX2)
    if (scan_chunk == scan_avx2) {
        current = "avx2";
    }
#endif
    PyObject *result = PyUnicode_FromString(current);
    if (name == NULL || result == NULL) {
        return result;
    }
    if (strcmp(name, "bytes") == 0) {
        scan_chunk = scan_bytes;
        line_end = line_end_bytes;
        return result;
    }
#if defined(__SSE2__)
    if (strcmp(name, "sse2") == 0) {
        scan_chunk = scan_sse2;
        line_end = line_end_sse2;
        return result;
    }
#endif
#if defined(HAVE_SCAN_AVX2)
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2")) {
        scan_chunk = scan_avx2;
        line_end = line_end_avx2;
        return result;
    }
#endif
    Py_DECREF(result);
    PyErr_Format(PyExc_ValueError, "scan version %s is not available here", name);
    return NULL;
}

/* ---------------------------------------------------------------------------------- */
/* json_scan: the one pass over an event's JSON text that the dialects' strict loader
 * needs after orjson has parsed it (dialects/_common.py, loads_bounded): the nesting
 * depth of its arrays and objects, and whether it holds 19 ASCII digits in a row (a
 * number orjson may not keep exact). The pure twin is _common.json_scan_py; the two are
 * held equal by tests/test_json_scan_twins.py. In Python the same facts cost an encode,
 * a translate, a count and a search: 470,000 of a Gemini W4 run's 2,030,000
 * instructions (callgrind), a quarter of the work. */

#define LONG_DIGIT_RUN 19

#define SCAN_LOOP(TYPE)                                                               \
    do {                                                                              \
        const TYPE *p = (const TYPE *)data;                                           \
        const TYPE *end = p + length;                                                 \
        while (p < end) {                                                             \
            Py_UCS4 c = *p++;                                                         \
            if (c - '0' < 10u) {                                                      \
                if (++run >= LONG_DIGIT_RUN) {                                        \
                    long_run = 1;                                                     \
                }                                                                     \
                continue;                                                             \
            }                                                                         \
            run = 0;                                                                  \
            if (in_string) {                                                          \
                if (c == '"') {                                                       \
                    in_string = 0;                                                    \
                } else if (c == '\\' && p < end) {                                   \
                    /* the escaped character; a digit there is still a digit of a run  \
                     * in the pure twin's byte scan, so it is not skipped unseen */    \
                    Py_UCS4 e = *p;                                                   \
                    if (e - '0' >= 10u) {                                             \
                        p++;                                                          \
                    }                                                                 \
                }                                                                     \
            } else if (c == '"') {                                                    \
                in_string = 1;                                                        \
            } else if (c == '[' || c == '{') {                                        \
                if (++depth > deepest) {                                              \
                    deepest = depth;                                                  \
                }                                                                     \
            } else if (c == ']' || c == '}') {                                        \
                depth--;                                                              \
            }                                                                         \
        }                                                                             \
    } while (0)

/* The UTF-8 bytes, 64 at a time, each block turned into bit masks (bit i for byte i) of
 * the bytes that matter: quotes, backslashes, opening and closing brackets, digits. No
 * byte of a multi-byte character is below 0x80, so those are the same bytes as in the
 * text. Where the scan went byte by byte through a table (8.5 instructions a byte,
 * 24,000 of a Gemini W4 feed's 205,000 under callgrind), the masks take about 1.5 and
 * the work left is per quote, backslash and bracket, not per byte. */
typedef struct {
    uint64_t quote, backslash, open, close, digit;
} scan_masks;

static inline void
block_masks(const unsigned char *p, scan_masks *m)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i lower = _mm_set1_epi8(0x20);
    const __m128i open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');
    const __m128i zero = _mm_set1_epi8('0');
    const __m128i nine = _mm_set1_epi8(9);
    /* One 16-byte quarter: its five 16-bit masks, shifted to their place (unrolled by
     * hand: gcc -O2 kept the loop and its variable shifts, 16 instructions a block). */
#define QUARTER(n, q, b, o, c, d)                                                     \
    do {                                                                              \
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * (n)));                 \
        /* 0x20 set makes '[' '{' and ']' '}', and no other byte either */            \
        __m128i folded = _mm_or_si128(v, lower);                                      \
        /* a digit is a byte whose distance above '0' is at most 9, unsigned */       \
        __m128i above = _mm_sub_epi8(v, zero);                                        \
        __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(above, nine), above);             \
        q = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << (16 * (n));  \
        b = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)) << (16 * (n)); \
        o = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) << (16 * (n)); \
        c = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) << (16 * (n)); \
        d = (uint64_t)(uint16_t)_mm_movemask_epi8(digit) << (16 * (n));               \
    } while (0)
    uint64_t q0, b0, o0, c0, d0, q1, b1, o1, c1, d1, q2, b2, o2, c2, d2, q3, b3, o3, c3, d3;
    QUARTER(0, q0, b0, o0, c0, d0);
    QUARTER(1, q1, b1, o1, c1, d1);
    QUARTER(2, q2, b2, o2, c2, d2);
    QUARTER(3, q3, b3, o3, c3, d3);
#undef QUARTER
    m->quote = q0 | q1 | q2 | q3;
    m->backslash = b0 | b1 | b2 | b3;
    m->open = o0 | o1 | o2 | o3;
    m->close = c0 | c1 | c2 | c3;
    m->digit = d0 | d1 | d2 | d3;
#else
    uint64_t q = 0, b = 0, o = 0, c = 0, d = 0;
    for (int i = 0; i < 64; i++) {
        unsigned char x = p[i];
        uint64_t bit = (uint64_t)1 << i;
        q |= x == '"' ? bit : 0;
        b |= x == '\\' ? bit : 0;
        o |= (x == '[' || x == '{') ? bit : 0;
        c |= (x == ']' || x == '}') ? bit : 0;
        d |= (unsigned char)(x - '0') < 10 ? bit : 0;
    }
    m->quote = q;
    m->backslash = b;
    m->open = o;
    m->close = c;
    m->digit = d;
#endif
}

static inline int
lowest_bit(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int i = 0;
    while (!(x & 1)) {
        x >>= 1;
        i++;
    }
    return i;
#endif
}

static inline int
bit_count(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    for (; x; x &= x - 1) {
        n++;
    }
    return n;
#endif
}

/* Bit i of the result: the parity of the set bits at or below i (so, over the quote
 * bits, whether byte i is inside a string, its opening quote included). */
static inline uint64_t
prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* How many zero bits are above the highest set bit of x (x != 0). */
static inline int
leading_zeros(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int n = 0;
    for (uint64_t top = (uint64_t)1 << 63; !(x & top); top >>= 1) {
        n++;
    }
    return n;
#endif
}

/* The bytes a backslash escapes, given the backslash mask of a block and whether the
 * last block ended in a backslash that escapes this one's byte 0 (*carry, updated for
 * the next block). Branch-free, where the loop per backslash it replaced was 6,400
 * instructions of a W2 Gemini run's 70,000 in json_scan (callgrind, h38).
 *
 * In a run of backslashes each pair is one escaped backslash, so a run escapes the byte
 * after it when its length is odd: when it starts on an even byte and ends before an
 * odd one, or starts on an odd byte and ends before an even one. Adding a run's first
 * bit to the mask carries through the run to the byte after it, so two additions (the
 * runs that start on even bytes, the ones that start on odd bytes) give those bytes. A
 * run of odd start that reaches byte 63 has odd length and carries out of the word:
 * byte 0 of the next block is escaped. */
static inline uint64_t
escaped_bytes(uint64_t backslash, uint64_t *carry)
{
    const uint64_t even = 0x5555555555555555ull;
    uint64_t in = *carry;
    uint64_t b = backslash & ~in; /* an escaped backslash escapes nothing */
    uint64_t starts = b & ~(b << 1);
    uint64_t after_even = (b + (starts & even)) & ~b;
    uint64_t odd_sum = b + (starts & ~even);
    *carry = odd_sum < b; /* carried out of byte 63 */
    uint64_t after_odd = odd_sum & ~b;
    return (after_even & ~even) | (after_odd & even) | in;
}

/* Whether a run of 19 digits ends in this block (bit i of digit: byte i is one), given
 * the digits that ended the blocks before (*carried, at most 19, updated). Branch-free:
 * the test per aligned 8-byte group it replaced was 6,000 instructions of the same run. */
static inline int
digit_run(uint64_t digit, int *carried)
{
    uint64_t r = digit & (digit >> 1); /* bit i: bytes i..i+1 are digits */
    r &= r >> 2;                      /* i..i+3 */
    r &= r >> 4;                      /* i..i+7 */
    r &= r >> 8;                      /* i..i+15 */
    r &= r >> 3;                      /* i..i+18 */
    uint64_t other = ~digit;
    int lead = other ? lowest_bit(other) : 64;
    int found = r != 0 || *carried + lead >= LONG_DIGIT_RUN;
    int tail = other ? leading_zeros(other) : *carried + 64;
    *carried = tail < LONG_DIGIT_RUN ? tail : LONG_DIGIT_RUN;
    return found;
}

/* The scan of the blocks, one body for each way of making the masks: SSE2 (or the byte
 * loop), and AVX2 with the popcnt and carry-less multiply instructions, chosen at the
 * first call where the CPU has them (the framer's scan_chunk does the same). */
#define SCAN_UTF8_BODY(BLOCK_MASKS, PREFIX_XOR)                                       \
    do {                                                                              \
        Py_ssize_t depth = 0, max_depth = 0;                                          \
        uint64_t in_string = 0; /* all ones when the last block ended in a string */  \
        uint64_t carry_escape = 0;                                                    \
        int carried_digits = 0, found_run = 0;                                        \
        unsigned char padded[64];                                                     \
        for (const unsigned char *p = start; p < end; p += 64) {                      \
            const unsigned char *block = p;                                           \
            if (end - p < 64) {                                                       \
                /* The last block, padded with spaces: nothing to the scan. */        \
                memcpy(padded, p, (size_t)(end - p));                                 \
                memset(padded + (end - p), ' ', (size_t)(64 - (end - p)));            \
                block = padded;                                                       \
            }                                                                         \
            scan_masks m;                                                             \
            BLOCK_MASKS(block, &m);                                                   \
            /* Escapes occur only in strings in valid JSON; most blocks have none. */ \
            uint64_t escaped = 0;                                                     \
            if (m.backslash | carry_escape) {                                         \
                escaped = escaped_bytes(m.backslash, &carry_escape);                  \
            }                                                                         \
            /* Strings: the unescaped quotes toggle, carried over from the last one. */ \
            uint64_t strings = PREFIX_XOR(m.quote & ~escaped) ^ in_string;            \
            in_string = (uint64_t)0 - (strings >> 63);                                \
            /* Depth: only the brackets outside strings, in order. */                 \
            uint64_t opens = m.open & ~strings;                                       \
            uint64_t closes = m.close & ~strings;                                     \
            if (closes == 0) {                                                        \
                depth += bit_count(opens);                                            \
                if (depth > max_depth) {                                              \
                    max_depth = depth;                                                \
                }                                                                     \
            } else {                                                                  \
                for (uint64_t x = opens | closes; x; x &= x - 1) {                    \
                    if (opens & x & (~x + 1)) {                                       \
                        if (++depth > max_depth) {                                    \
                            max_depth = depth;                                        \
                        }                                                             \
                    } else {                                                          \
                        depth--;                                                      \
                    }                                                                 \
                }                                                                     \
            }                                                                         \
            /* 19 digits in a row, strings or not (as the pure twin's byte scan sees  \
             * them). */                                                              \
            found_run |= digit_run(m.digit, &carried_digits);                         \
        }                                                                             \
        *deepest = max_depth;                                                         \
        *long_run = found_run;                                                        \
    } while (0)

static void
scan_utf8_sse2(const unsigned char *start, const unsigned char *end, Py_ssize_t *deepest,
               int *long_run)
{
    SCAN_UTF8_BODY(block_masks, prefix_xor);
}

typedef void (*scan_utf8_fn)(const unsigned char *, const unsigned char *, Py_ssize_t *,
                             int *);

#if defined(HAVE_SCAN_AVX2)
#define HAVE_JSON_SCAN_AVX2 1
#define JSON_SCAN_AVX2_TARGET __attribute__((target("avx2,popcnt,pclmul")))

/* block_masks, 32 bytes at a time: half the loads, compares and movemasks of SSE2. */
JSON_SCAN_AVX2_TARGET static inline void
block_masks_avx2(const unsigned char *p, scan_masks *m)
{
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    const __m256i lower = _mm256_set1_epi8(0x20);
    const __m256i open = _mm256_set1_epi8('{');
    const __m256i close = _mm256_set1_epi8('}');
    const __m256i zero = _mm256_set1_epi8('0');
    const __m256i nine = _mm256_set1_epi8(9);
    /* Each half's five 32-bit masks, shifted to their place (by hand: -O2 kept a loop). */
#define HALF(n, q, b, o, c, d)                                                        \
    do {                                                                              \
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * (n)));              \
        /* as in block_masks: 0x20 set makes '[' '{' and ']' '}', and nothing else */ \
        __m256i folded = _mm256_or_si256(v, lower);                                   \
        __m256i above = _mm256_sub_epi8(v, zero);                                     \
        __m256i digit = _mm256_cmpeq_epi8(_mm256_min_epu8(above, nine), above);       \
        q = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, quote)) << (32 * (n)); \
        b = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, backslash))        \
            << (32 * (n));                                                            \
        o = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, open)) << (32 * (n)); \
        c = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, close))       \
            << (32 * (n));                                                            \
        d = (uint64_t)(uint32_t)_mm256_movemask_epi8(digit) << (32 * (n));            \
    } while (0)
    uint64_t q0, b0, o0, c0, d0, q1, b1, o1, c1, d1;
    HALF(0, q0, b0, o0, c0, d0);
    HALF(1, q1, b1, o1, c1, d1);
#undef HALF
    m->quote = q0 | q1;
    m->backslash = b0 | b1;
    m->open = o0 | o1;
    m->close = c0 | c1;
    m->digit = d0 | d1;
}

/* prefix_xor in one carry-less multiply by all ones (each bit the XOR of those below). */
JSON_SCAN_AVX2_TARGET static inline uint64_t
prefix_xor_clmul(uint64_t x)
{
    __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)x),
                                           _mm_set1_epi8((char)0xFF), 0);
    return (uint64_t)_mm_cvtsi128_si64(product);
}

JSON_SCAN_AVX2_TARGET static void
scan_utf8_avx2(const unsigned char *start, const unsigned char *end, Py_ssize_t *deepest,
               int *long_run)
{
    SCAN_UTF8_BODY(block_masks_avx2, prefix_xor_clmul);
}
#endif

static void scan_utf8_pick(const unsigned char *, const unsigned char *, Py_ssize_t *,
                           int *);

/* The version json_scan runs: scan_utf8_pick until the first call, which chooses. */
static scan_utf8_fn scan_utf8 = scan_utf8_pick;

static int
json_scan_avx2_supported(void)
{
#if defined(HAVE_JSON_SCAN_AVX2)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") &&
           __builtin_cpu_supports("pclmul");
#else
    return 0;
#endif
}

static void
scan_utf8_pick(const unsigned char *start, const unsigned char *end, Py_ssize_t *deepest,
               int *long_run)
{
    scan_utf8 = scan_utf8_sse2;
#if defined(HAVE_JSON_SCAN_AVX2)
    if (json_scan_avx2_supported()) {
        scan_utf8 = scan_utf8_avx2;
    }
#endif
    scan_utf8(start, end, deepest, long_run);
}

/* _json_scan_version(name=None): which version json_scan runs ("avx2" or "sse2", the
 * latter being the byte loop where the compiler has no SSE2), and with a name, run that
 * one instead: the tests hold each version this machine can run to the pure twin. */
static PyObject *
json_scan_version(PyObject *module, PyObject *args)
{
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|z:_json_scan_version", &name)) {
        return NULL;
    }
    if (scan_utf8 == scan_utf8_pick) {
        scan_utf8 = scan_utf8_sse2;
        if (json_scan_avx2_supported()) {
#if defined(HAVE_JSON_SCAN_AVX2)
            scan_utf8 = scan_utf8_avx2;
#endif
        }
    }
    PyObject *result = PyUnicode_FromString(scan_utf8 == scan_utf8_sse2 ? "sse2" : "avx2");
    if (name == NULL || result == NULL) {
        return result;
    }
    if (strcmp(name, "sse2") == 0) {
        scan_utf8 = scan_utf8_sse2;
        return result;
    }
#if defined(HAVE_JSON_SCAN_AVX2)
    if (strcmp(name, "avx2") == 0 && json_scan_avx2_supported()) {
        scan_utf8 = scan_utf8_avx2;
        return result;
    }
#endif
    Py_DECREF(result);
    PyErr_Format(PyExc_ValueError, "json scan version %s is not available here", name);
    return NULL;
}

static PyObject *
json_scan(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "json_scan() takes a str");
        return NULL;
    }
    Py_ssize_t deepest = 0;
    int long_run = 0;
    /* orjson.loads has just asked for the same UTF-8 (kept in the str), so this is a
     * lookup, not an encode. */
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 != NULL) {
        scan_utf8((const unsigned char *)utf8, (const unsigned char *)utf8 + size, &deepest,
                  &long_run);
    } else {
        /* Lone surrogates (no UTF-8 exists; orjson refuses such text before this is
         * asked): the code points themselves. */
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            return NULL;
        }
        PyErr_Clear();
        Py_ssize_t length = PyUnicode_GET_LENGTH(text);
        const void *data = PyUnicode_DATA(text);
        Py_ssize_t depth = 0, run = 0;
        int in_string = 0;
        switch (PyUnicode_KIND(text)) {
        case PyUnicode_1BYTE_KIND:
            SCAN_LOOP(Py_UCS1);
            break;
        case PyUnicode_2BYTE_KIND:
            SCAN_LOOP(Py_UCS2);
            break;
        default:
            SCAN_LOOP(Py_UCS4);
            break;
        }
    }
    /* Not Py_BuildValue: its format parsing was 330 instructions a call (callgrind). */
    PyObject *bound = PyLong_FromSsize_t(deepest);
    if (bound == NULL) {
        return NULL;
    }
    PyObject *result = PyTuple_New(2);
    if (result == NULL) {
        Py_DECREF(bound);
        return NULL;
    }
    PyTuple_SET_ITEM(result, 0, bound);
    PyTuple_SET_ITEM(result, 1, Py_NewRef(long_run ? Py_True : Py_False));
    return result;
}

static PyMethodDef module_methods[] = {
    {"_setup", (PyCFunction)(void (*)(void))setup, METH_VARARGS | METH_KEYWORDS,
     "Give the module sse.py's event class, exception classes and limits."},
    {"_scan_version", scan_version, METH_VARARGS,
     "_scan_version(name=None) -> the chunk scan's version before; a name switches it."},
    {"_json_scan_version", json_scan_version, METH_VARARGS,
     "_json_scan_version(name=None) -> json_scan's version before; a name switches it."},
    {"json_scan", (PyCFunction)json_scan, METH_O,
     "json_scan(text) -> (depth, long_run): the nesting depth of valid JSON text and "
     "whether it holds 19 ASCII digits in a row."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sse_toolcalls._sse_c",
    .m_doc = "The compiled twin of sse_toolcalls.framing.sse.SSEFramer; use it through framing/sse.py.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__sse_c(void)
{
    str_message = PyUnicode_InternFromString("message");
    str_empty = PyUnicode_InternFromString("");
    str_lf = PyUnicode_InternFromString("\n");
    if (str_message == NULL || str_empty == NULL || str_lf == NULL) {
        return NULL;
    }
    if (PyType_Ready(&FramerType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "SSEFramer", (PyObject *)&FramerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
