/* The character-by-character work of building a document, in C.
 *
 * Why: building a document took five times what rjieba takes to segment its text
 * (issue 12), and most of the difference was Python walking the text a character or a
 * word at a time: folding it, finding the runs, splitting rjieba's output back into
 * runs, appending each word, sub-word and bigram, pairing words for the MinHash. Each
 * function below has a Python twin that states the rule and runs wherever this module
 * was not built (no C compiler at install time); the tests run both and compare them.
 *
 * fold_chars(text, tables) -> (folded, traditional): the character table of
 *     analysis/fold.py (``_tables``) applied, and whether any character of ``text`` is
 *     one OpenCC would simplify (fold.py then converts those runs by phrase).
 * pair_hashes(text) -> bytes: rensa's token hash of each "w0 w1", "w1 w2", ... of the
 *     words of ``text`` (separated by single spaces) as native 64-bit integers, for the
 *     MinHash (minhash.py); None if the text holds a lone surrogate.
 * scan(text) -> (runs, han): the runs of RUNS in order, and the Han ones joined by
 *     newlines, for one call into rjieba.
 * grams_of_runs(runs) -> the bigram stream alone, for a document read back from the
 *     index (its bigram fields are not stored).
 * assemble(runs, cut, subwords, joined=False) -> (words, extras, grams), or None when
 *     rjieba's output does not split into one list of words a Han run (never seen; the
 *     caller then takes the Python path). Lists of str, or with ``joined`` each stream
 *     as one str, its tokens separated by spaces: what an index field is given. ``subwords`` is a mapping word -> tuple of
 *     sub-words, asked only for a Han word longer than two characters or a Latin word
 *     with a joiner.
 * sheet_lines(rows) -> str: a spreadsheet's rows (lists of calamine's cell values), one
 *     line each, as services/extractor/sheet_text.py's rule makes them: cells joined by
 *     a space, numbers as typed (an integral float without its ".0"), every run of
 *     whitespace (str.split's) one space, no space at a line's ends, empty lines left
 *     out, lines joined by "\n".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_TOKEN_CHARS 64

/* The layout of fold_chars' tables (fold.py, ``native_tables``): a folded code point
 * for every BMP character and for the CJK Compatibility Ideographs Supplement (0 when
 * the character folds to itself), then one bit a BMP character: "traditional". */
#define SUPPLEMENT_START 0x2F800
#define SUPPLEMENT_END 0x2FA20
#define MAP_ENTRIES (0x10000 + (SUPPLEMENT_END - SUPPLEMENT_START))
#define TABLES_BYTES (MAP_ENTRIES * 4 + 0x10000 / 8)

/* HAN in han.py: CJK Unified Ideographs, Extension A, Compatibility Ideographs and
 * the supplementary planes (Extensions B and later). */
static inline int is_han(Py_UCS4 c)
{
    return (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0x20000 && c <= 0x3134F);
}

/* _ALNUM in words.py, [^\W_HAN]: what re calls a word character, less "_" and Han. */
static inline int is_alnum(Py_UCS4 c)
{
    if (c < 0x80) /* most of what is not Han: a test in place of four table lookups */
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    return Py_UNICODE_ISALNUM(c) && !is_han(c);
}

/* The end of the _WORD match that starts at ``i`` (an alnum character). */
static Py_ssize_t word_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    while (i < n && is_alnum(PyUnicode_READ(kind, data, i)))
        i++;
    for (;;) { /* (?:[._\-]ALNUM+)* */
        if (i + 1 >= n)
            break;
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (!(c == '.' || c == '_' || c == '-') || !is_alnum(PyUnicode_READ(kind, data, i + 1)))
            break;
        i += 2;
        while (i < n && is_alnum(PyUnicode_READ(kind, data, i)))
            i++;
    }
    /* (?:(?:\+\+|#)(?!ALNUM))? */
    if (i + 1 < n && PyUnicode_READ(kind, data, i) == '+' && PyUnicode_READ(kind, data, i + 1) == '+') {
        if (i + 2 >= n || !is_alnum(PyUnicode_READ(kind, data, i + 2)))
            i += 2;
    } else if (i < n && PyUnicode_READ(kind, data, i) == '#') {
        if (i + 1 >= n || !is_alnum(PyUnicode_READ(kind, data, i + 1)))
            i += 1;
    }
    return i;
}

static int append_new(PyObject *list, PyObject *item)
{
    if (item == NULL)
        return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

/* Where assemble puts a stream's tokens: a list of str, or one text with a space
 * between tokens, as an index field takes them. The text saves the indexer a
 * str.join of some 3,000 tokens a page (0.1 ms) and every bigram its str object. */
typedef struct {
    PyObject *list; /* NULL: text */
    Py_UCS4 *text;
    Py_ssize_t length, capacity, count;
} Sink;

static int sink_reserve(Sink *sink, Py_ssize_t more)
{
    if (sink->length + more <= sink->capacity)
        return 0;
    Py_ssize_t capacity = (sink->length + more) * 2 + 64;
    Py_UCS4 *text = PyMem_Realloc(sink->text, (size_t)capacity * sizeof(Py_UCS4));
    if (text == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    sink->text = text;
    sink->capacity = capacity;
    return 0;
}

/* Room for a token of ``n`` characters, after a space unless it is the first. */
static Py_UCS4 *sink_slot(Sink *sink, Py_ssize_t n)
{
    if (sink_reserve(sink, n + 1) < 0)
        return NULL;
    if (sink->count++ > 0)
        sink->text[sink->length++] = ' ';
    Py_UCS4 *slot = sink->text + sink->length;
    sink->length += n;
    return slot;
}

static int sink_add(Sink *sink, PyObject *token)
{
    if (sink->list != NULL)
        return PyList_Append(sink->list, token);
    Py_ssize_t n = PyUnicode_GET_LENGTH(token);
    Py_UCS4 *slot = sink_slot(sink, n);
    return slot == NULL || PyUnicode_AsUCS4(token, slot, n, 0) == NULL ? -1 : 0;
}

/* The list, or the text as a str; the sink is emptied either way. */
static PyObject *sink_result(Sink *sink)
{
    PyObject *out = sink->list != NULL
        ? Py_NewRef(sink->list)
        : PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, sink->text, sink->length);
    Py_CLEAR(sink->list);
    PyMem_Free(sink->text);
    sink->text = NULL;
    return out;
}

static PyObject *fold_chars(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_buffer tables;
    if (!PyArg_ParseTuple(args, "Uy*", &text, &tables))
        return NULL;
    if (tables.len != TABLES_BYTES) {
        PyBuffer_Release(&tables);
        PyErr_SetString(PyExc_ValueError, "fold_chars() wants fold.native_tables()");
        return NULL;
    }
    const uint32_t *map = (const uint32_t *)tables.buf;
    const unsigned char *traditional = (const unsigned char *)tables.buf + MAP_ENTRIES * 4;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *out = NULL;
    int any_traditional = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i), to = 0;
        if (c < 0x10000) {
            to = map[c];
            any_traditional |= (traditional[c >> 3] >> (c & 7)) & 1;
        } else if (c >= SUPPLEMENT_START && c < SUPPLEMENT_END) {
            to = map[0x10000 + (c - SUPPLEMENT_START)];
        }
        if (to == 0)
            continue;
        if (out == NULL) { /* the first change: copy what came before */
            if ((out = PyUnicode_AsUCS4Copy(text)) == NULL) {
                PyBuffer_Release(&tables);
                return NULL;
            }
        }
        out[i] = to;
    }
    PyBuffer_Release(&tables);
    PyObject *folded;
    if (out == NULL) {
        folded = text;
        Py_INCREF(folded);
    } else {
        folded = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n);
        PyMem_Free(out);
        if (folded == NULL)
            return NULL;
    }
    return Py_BuildValue("(NO)", folded, any_traditional ? Py_True : Py_False);
}

/* The MinHash's token hashes. rensa hashes each token's UTF-8 bytes with rustc-hash 2's
 * FxHasher (one write, then finish) before applying its permutations, and takes such
 * hashes directly too. Computing them here for each pair "w_i w_i+1" means no pair
 * string is ever made: in the words' text, space-separated as the index takes them,
 * every pair is a slice of its UTF-8 bytes. Making the pair strings was 0.1 ms
 * of a demo page, rensa's own work on them a tenth of that. The tests check these
 * hashes against rensa.RMinHash.hash_token_sets. */
#define FX_MULTIPLIER 0xf1357aea2e62a9c5ULL
#define FX_START_0 0x243f6a8885a308d3ULL /* digits of pi, rustc-hash's seeds */
#define FX_START_1 0x13198a2e03707344ULL
#define FX_CHUNK_KEY 0xa4093822299f31d0ULL

static inline uint64_t read_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t read_le32(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static inline uint64_t folded_product(uint64_t a, uint64_t b)
{
    unsigned __int128 product = (unsigned __int128)a * b;
    return (uint64_t)product ^ (uint64_t)(product >> 64);
}

static uint64_t token_hash(const unsigned char *p, size_t n)
{
    uint64_t s0 = FX_START_0, s1 = FX_START_1;
    if (n > 16) {
        for (size_t at = 0; at + 16 < n; at += 16) {
            uint64_t next = folded_product(s0 ^ read_le64(p + at), FX_CHUNK_KEY ^ read_le64(p + at + 8));
            s0 = s1;
            s1 = next;
        }
        s0 ^= read_le64(p + n - 16);
        s1 ^= read_le64(p + n - 8);
    } else if (n >= 8) {
        s0 ^= read_le64(p);
        s1 ^= read_le64(p + n - 8);
    } else if (n >= 4) {
        s0 ^= read_le32(p);
        s1 ^= read_le32(p + n - 4);
    } else if (n > 0) {
        s0 ^= p[0];
        s1 ^= (uint64_t)p[n - 1] << 8 | p[n / 2];
    }
    uint64_t h = (folded_product(s0, s1) ^ (uint64_t)n) * FX_MULTIPLIER;
    return h << 26 | h >> 38;
}

static PyObject *pair_hashes(PyObject *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "pair_hashes() wants the words as one space-separated str");
        return NULL;
    }
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &size);
    if (text == NULL) { /* a lone surrogate, which rensa refuses too: the caller's string path says so */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_ssize_t spaces = 0;
    for (const char *c = memchr(text, ' ', (size_t)size); c != NULL;
         c = memchr(c + 1, ' ', (size_t)(size - (c + 1 - text))))
        spaces++;
    PyObject *out = PyBytes_FromStringAndSize(NULL, spaces * (Py_ssize_t)sizeof(uint64_t));
    if (out == NULL)
        return NULL;
    uint64_t *hashes = (uint64_t *)PyBytes_AS_STRING(out);
    /* Pair k runs from word k's start to the space after word k + 1, or the end. */
    const unsigned char *bytes = (const unsigned char *)text;
    Py_ssize_t start = 0, middle = -1, k = 0;
    for (Py_ssize_t i = 0; i <= size; i++) {
        if (i < size && bytes[i] != ' ')
            continue;
        if (middle >= 0) {
            hashes[k++] = token_hash(bytes + start, (size_t)(i - start));
            start = middle + 1;
        }
        middle = i;
    }
    return out;
}

static PyObject *scan(PyObject *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "scan() wants a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    PyObject *runs = PyList_New(0), *hans = PyList_New(0), *sep = NULL, *joined = NULL;
    if (runs == NULL || hans == NULL)
        goto fail;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        Py_ssize_t end;
        if (is_han(c)) {
            end = i + 1;
            while (end < n && is_han(PyUnicode_READ(kind, data, end)))
                end++;
            PyObject *run = PyUnicode_Substring(arg, i, end);
            if (run == NULL || PyList_Append(hans, run) < 0) {
                Py_XDECREF(run);
                goto fail;
            }
            if (append_new(runs, run) < 0)
                goto fail;
        } else if (is_alnum(c)) {
            end = word_end(kind, data, n, i);
            if (append_new(runs, PyUnicode_Substring(arg, i, end)) < 0)
                goto fail;
        } else {
            end = i + 1;
        }
        i = end;
    }
    sep = PyUnicode_FromString("\n");
    if (sep == NULL || (joined = PyUnicode_Join(sep, hans)) == NULL)
        goto fail;
    Py_DECREF(sep);
    Py_DECREF(hans);
    PyObject *out = PyTuple_Pack(2, runs, joined);
    Py_DECREF(runs);
    Py_DECREF(joined);
    return out;
fail:
    Py_XDECREF(runs);
    Py_XDECREF(hans);
    Py_XDECREF(sep);
    return NULL;
}

static int has_joiner(PyObject *word)
{
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '.' || c == '-' || c == '_')
            return 1;
    }
    return 0;
}

/* Extend ``extras`` by subwords[word]. */
static int add_subwords(Sink *extras, PyObject *subwords, PyObject *word)
{
    PyObject *found = PyObject_GetItem(subwords, word);
    if (found == NULL)
        return -1;
    PyObject *seq = PySequence_Fast(found, "sub-words must be a sequence");
    Py_DECREF(found);
    if (seq == NULL)
        return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t k = 0; k < m; k++) {
        if (sink_add(extras, items[k]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* The bigram strings made lately, by their two characters: a site's text repeats its
 * bigrams, and taking one from here costs less than making it (a page has about two
 * thousand). Direct-mapped, so it never holds more than GRAM_SLOTS strings. */
#define GRAM_SLOTS (1 << 16)
static struct {
    uint64_t key;
    PyObject *gram;
} gram_cache[GRAM_SLOTS];

static PyObject *bigram(PyObject *run, Py_ssize_t i)
{
    uint64_t a = PyUnicode_READ_CHAR(run, i), b = PyUnicode_READ_CHAR(run, i + 1);
    uint64_t key = (a << 21 | b) + 1; /* + 1: no key is 0, the empty slot's */
    size_t slot = (size_t)((a * 0x9E3779B1u) ^ b) & (GRAM_SLOTS - 1);
    if (gram_cache[slot].key == key) {
        Py_INCREF(gram_cache[slot].gram);
        return gram_cache[slot].gram;
    }
    PyObject *gram = PyUnicode_Substring(run, i, i + 2);
    if (gram == NULL)
        return NULL;
    Py_XSETREF(gram_cache[slot].gram, Py_NewRef(gram));
    gram_cache[slot].key = key;
    return gram;
}

/* add_han_grams in grams.py: a lone character is its own gram. */
static int add_han_grams(Sink *grams, PyObject *run)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(run);
    if (n == 1)
        return sink_add(grams, run);
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        if (grams->list != NULL) {
            if (append_new(grams->list, bigram(run, i)) < 0)
                return -1;
            continue;
        }
        Py_UCS4 *slot = sink_slot(grams, 2);
        if (slot == NULL)
            return -1;
        slot[0] = PyUnicode_READ_CHAR(run, i);
        slot[1] = PyUnicode_READ_CHAR(run, i + 1);
    }
    return 0;
}

static int is_lower_ascii(PyObject *run)
{
    if (!PyUnicode_IS_ASCII(run))
        return 0;
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(run);
    for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(run); i < n; i++) {
        if (data[i] >= 'A' && data[i] <= 'Z')
            return 0;
    }
    return 1;
}

/* A non-Han run case-folded (a new reference). Folded text has its ASCII letters
 * lower-cased already, so the str method is called only for the rare run beyond ASCII. */
static PyObject *case_folded(PyObject *run)
{
    return is_lower_ascii(run) ? Py_NewRef(run) : PyObject_CallMethod(run, "casefold", NULL);
}

/* add_word_run and add_word_gram in words.py and grams.py. */
static int add_word(Sink *words, Sink *extras, Sink *grams, PyObject *run, PyObject *subwords)
{
    PyObject *word = case_folded(run);
    if (word == NULL)
        return -1;
    int rc = 0;
    if (PyUnicode_GET_LENGTH(word) <= MAX_TOKEN_CHARS) {
        rc = sink_add(words, word);
        if (rc == 0 && has_joiner(word))
            rc = add_subwords(extras, subwords, word);
    }
    if (rc == 0 && PyUnicode_GET_LENGTH(run) <= MAX_TOKEN_CHARS)
        rc = sink_add(grams, word); /* the gram is the run case-folded: the same word */
    Py_DECREF(word);
    return rc;
}

static PyObject *grams_of_runs(PyObject *self, PyObject *runs)
{
    if (!PyList_Check(runs)) {
        PyErr_SetString(PyExc_TypeError, "grams_of_runs() wants scan()'s runs");
        return NULL;
    }
    PyObject *grams = PyList_New(0);
    if (grams == NULL)
        return NULL;
    Sink sink = {.list = grams};
    for (Py_ssize_t r = 0, n = PyList_GET_SIZE(runs); r < n; r++) {
        PyObject *run = PyList_GET_ITEM(runs, r);
        if (!PyUnicode_Check(run) || PyUnicode_GET_LENGTH(run) == 0) {
            PyErr_SetString(PyExc_TypeError, "runs must be the non-empty strs of scan()");
            goto fail;
        }
        if (is_han(PyUnicode_READ_CHAR(run, 0))) {
            if (add_han_grams(&sink, run) < 0)
                goto fail;
        } else if (PyUnicode_GET_LENGTH(run) <= MAX_TOKEN_CHARS) { /* add_word_gram */
            if (append_new(grams, case_folded(run)) < 0)
                goto fail;
        }
    }
    return grams;
fail:
    Py_DECREF(grams);
    return NULL;
}

static void sinks_clear(Sink sinks[3])
{
    for (int k = 0; k < 3; k++) {
        Py_CLEAR(sinks[k].list);
        PyMem_Free(sinks[k].text);
        sinks[k].text = NULL;
    }
}

static PyObject *assemble(PyObject *self, PyObject *args)
{
    PyObject *runs, *cut, *subwords;
    int joined = 0;
    if (!PyArg_ParseTuple(args, "O!O!O|p", &PyList_Type, &runs, &PyList_Type, &cut, &subwords, &joined))
        return NULL;
    Sink sinks[3] = {{0}, {0}, {0}}; /* words, extras, grams */
    Sink *words = &sinks[0], *extras = &sinks[1], *grams = &sinks[2];
    for (int k = 0; k < 3 && !joined; k++) {
        if ((sinks[k].list = PyList_New(0)) == NULL)
            goto fail;
    }
    Py_ssize_t nruns = PyList_GET_SIZE(runs), ncut = PyList_GET_SIZE(cut), at = 0;
    for (Py_ssize_t r = 0; r < nruns; r++) {
        PyObject *run = PyList_GET_ITEM(runs, r);
        if (!PyUnicode_Check(run) || PyUnicode_GET_LENGTH(run) == 0) {
            PyErr_SetString(PyExc_TypeError, "runs must be the non-empty strs of scan()");
            goto fail;
        }
        if (!is_han(PyUnicode_READ_CHAR(run, 0))) {
            if (add_word(words, extras, grams, run, subwords) < 0)
                goto fail;
            continue;
        }
        /* This run's words: rjieba's output up to the next newline. */
        Py_ssize_t taken = 0;
        for (; at < ncut; at++) {
            PyObject *w = PyList_GET_ITEM(cut, at);
            if (!PyUnicode_Check(w))
                goto mismatch;
            Py_ssize_t len = PyUnicode_GET_LENGTH(w);
            if (len == 0)
                continue;
            if (len == 1 && PyUnicode_READ_CHAR(w, 0) == '\n') {
                at++;
                break;
            }
            taken += len;
            if (len <= MAX_TOKEN_CHARS) {
                if (sink_add(words, w) < 0)
                    goto fail;
                if (len > 2 && add_subwords(extras, subwords, w) < 0)
                    goto fail;
            }
        }
        if (taken != PyUnicode_GET_LENGTH(run))
            goto mismatch;
        if (add_han_grams(grams, run) < 0)
            goto fail;
    }
    if (at != ncut)
        goto mismatch;
    PyObject *out[3];
    for (int k = 0; k < 3; k++)
        out[k] = sink_result(&sinks[k]);
    if (out[0] == NULL || out[1] == NULL || out[2] == NULL) {
        Py_XDECREF(out[0]);
        Py_XDECREF(out[1]);
        Py_XDECREF(out[2]);
        return NULL;
    }
    return Py_BuildValue("(NNN)", out[0], out[1], out[2]);
mismatch:
    sinks_clear(sinks);
    Py_RETURN_NONE;
fail:
    sinks_clear(sinks);
    return NULL;
}


/* --- sheet_lines: a spreadsheet's rows to lines of text */

/* A cell's text: the str itself (a new reference), None for an empty cell, NULL on
 * error. A float that is finite and integral is written as an integer ("6", not
 * "6.0"), another as repr() gives it; any other value as str() gives it. */
static PyObject *cell_text(PyObject *cell, int *empty)
{
    *empty = 0;
    if (PyUnicode_Check(cell)) {
        Py_INCREF(cell);
        return cell;
    }
    if (cell == Py_None) {
        *empty = 1;
        return NULL;
    }
    if (PyFloat_Check(cell)) {
        double v = PyFloat_AS_DOUBLE(cell);
        if (isfinite(v) && v == floor(v)) {
            PyObject *n = PyLong_FromDouble(v);
            if (n == NULL)
                return NULL;
            PyObject *text = PyObject_Str(n);
            Py_DECREF(n);
            return text;
        }
        return PyObject_Repr(cell);
    }
    return PyObject_Str(cell);
}

/* str.split's whitespace: a table below 128, and none above U+3000 (the ideographic
 * space), where most of a Chinese sheet's characters are, so that they are not each
 * looked up in Unicode's tables. */
static inline int sheet_space(Py_UCS4 c)
{
    return c < 128 ? Py_UNICODE_ISSPACE(c) : c <= 0x3000 && Py_UNICODE_ISSPACE(c);
}

/* The characters of one cell onto ``out`` (a Sink's text): a "\n" before the first of
 * a line (when a line came before), one space for any whitespace between two of them
 * (or between two cells: ``space`` comes in set), ``max`` raised to the widest.
 * ``n`` characters of type TYPE at ``data``. */
#define SHEET_CELL_CHARS(TYPE)                                                                                         \
    do {                                                                                                               \
        const TYPE *chars = (const TYPE *)data;                                                                        \
        for (Py_ssize_t k = 0; k < n; k++) {                                                                           \
            Py_UCS4 ch = chars[k];                                                                                     \
            if (sheet_space(ch)) {                                                                                     \
                space = started;                                                                                       \
                continue;                                                                                              \
            }                                                                                                          \
            if (!started) {                                                                                            \
                if (out.length > 0) /* a line before this one */                                                       \
                    out.text[out.length++] = '\n';                                                                     \
                started = 1;                                                                                           \
            } else if (space) {                                                                                        \
                out.text[out.length++] = ' ';                                                                          \
            }                                                                                                          \
            space = 0;                                                                                                 \
            out.text[out.length++] = ch;                                                                               \
            if (ch > max)                                                                                              \
                max = ch;                                                                                              \
        }                                                                                                              \
    } while (0)

/* The ``len`` characters at ``buf`` as a str made at the width of ``max``, the widest
 * of them (known already: PyUnicode_FromKindAndData would scan them for it again). */
static PyObject *text_of_width(const Py_UCS4 *buf, Py_ssize_t len, Py_UCS4 max)
{
    PyObject *text = PyUnicode_New(len, max);
    if (text == NULL)
        return NULL;
    void *data = PyUnicode_DATA(text);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        for (Py_ssize_t i = 0; i < len; i++)
            ((Py_UCS1 *)data)[i] = (Py_UCS1)buf[i];
        break;
    case PyUnicode_2BYTE_KIND:
        for (Py_ssize_t i = 0; i < len; i++)
            ((Py_UCS2 *)data)[i] = (Py_UCS2)buf[i];
        break;
    default:
        if (len)
            memcpy(data, buf, (size_t)len * sizeof(Py_UCS4));
    }
    return text;
}

static PyObject *sheet_lines(PyObject *self, PyObject *rows)
{
    PyObject *seq = PySequence_Fast(rows, "rows must be a sequence of rows");
    if (seq == NULL)
        return NULL;
    Sink out = {0}; /* its text only */
    Py_UCS4 max = 0;
    Py_ssize_t nrows = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t r = 0; r < nrows; r++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, r), "a row must be a sequence of cells");
        if (row == NULL)
            goto fail;
        Py_ssize_t ncells = PySequence_Fast_GET_SIZE(row);
        int started = 0, space = 0;
        for (Py_ssize_t i = 0; i < ncells; i++) {
            int empty;
            PyObject *text = cell_text(PySequence_Fast_GET_ITEM(row, i), &empty);
            if (text == NULL) {
                if (empty)
                    continue;
                Py_DECREF(row);
                goto fail;
            }
            Py_ssize_t n = PyUnicode_GET_LENGTH(text);
            /* at most: a "\n" before the line, a space before this cell, the cell */
            if (sink_reserve(&out, n + 2) < 0) {
                Py_DECREF(text);
                Py_DECREF(row);
                goto fail;
            }
            const void *data = PyUnicode_DATA(text);
            space = started; /* between two cells */
            switch (PyUnicode_KIND(text)) {
            case PyUnicode_1BYTE_KIND:
                SHEET_CELL_CHARS(Py_UCS1);
                break;
            case PyUnicode_2BYTE_KIND:
                SHEET_CELL_CHARS(Py_UCS2);
                break;
            default:
                SHEET_CELL_CHARS(Py_UCS4);
            }
            Py_DECREF(text);
        }
        Py_DECREF(row);
    }
    Py_DECREF(seq);
    PyObject *result = text_of_width(out.text, out.length, max);
    PyMem_Free(out.text);
    return result;
fail:
    Py_DECREF(seq);
    PyMem_Free(out.text);
    return NULL;
}

static PyMethodDef methods[] = {
    {"fold_chars", fold_chars, METH_VARARGS, "(folded text, any traditional character) by fold.py's table."},
    {"pair_hashes", pair_hashes, METH_O, "rensa's token hashes of each word pair of a space-separated text."},
    {"scan", scan, METH_O, "(runs, Han runs joined by newlines) of folded text."},
    {"grams_of_runs", grams_of_runs, METH_O, "The bigram stream alone, from scan()'s runs."},
    {"assemble", assemble, METH_VARARGS,
     "(words, sub-words, bigrams) from scan()'s runs and rjieba's cut: lists, or space-joined strs if joined."},
    {"sheet_lines", sheet_lines, METH_O, "A spreadsheet's rows as lines of text, by sheet_text.py's rule."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The character-by-character work of building a document, in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__native(void)
{
    return PyModule_Create(&module);
}
