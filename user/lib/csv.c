// SPDX-License-Identifier: GPL-2.0
/*
 * Line-oriented CSV reader. Line length is unbounded, and lines are split in
 * place so a million-line file costs no per-field allocation.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"

/*
 * The block a regular file is read in (a longer line doubles it): 1 MiB is
 * mapped on its own (joules-train's M_MMAP_THRESHOLD), so freeing it
 * leaves no resident hole in the heap under the arrays read into.
 */
#define CSV_BLOCK (1024 * 1024)

void csv_init(struct csv_reader *r, FILE *fp, const char *name,
	      unsigned int flags)
{
	struct stat st;
	int fd = fileno(fp);

	memset(r, 0, sizeof(*r));
	r->fp = fp;
	r->name = name;
	r->flags = flags;
	/*
	 * A regular file is read a block at a time and its lines are split
	 * where they lie: no copy per line. A pipe keeps getline(), whose
	 * lines come as the writer sends them (a block read would wait).
	 */
	r->block = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode);
}

void csv_free(struct csv_reader *r)
{
	free(r->buf);
	free(r->field);
	r->buf = NULL;
	r->line = NULL;
	r->field = NULL;
	r->cap = 0;
	r->maxfield = 0;
	r->nfield = 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Where an unquoted field's scan stops: its end (NUL, comma) or a quote. */
static const unsigned char field_stop[256] = { [0] = 1, [','] = 1, ['"'] = 1 };

int csv_split(char *line, char **field, unsigned int max, const char **why)
{
	unsigned int n = 0;
	char *p = line;

	for (;;) {
		char *start, *end;

		while (is_blank(*p))
			p++;
		if (*p == '"') {
			/* Quoted: unquote in place, "" stands for one quote. */
			char *w = ++p;

			start = w;
			for (;;) {
				if (!*p) {
					*why = "unterminated quoted field";
					return -EINVAL;
				}
				if (*p == '"') {
					if (p[1] != '"')
						break;
					p++;
				}
				*w++ = *p++;
			}
			p++;
			end = w;
			while (is_blank(*p))
				p++;
			if (*p && *p != ',') {
				*why = "junk after a quoted field";
				return -EINVAL;
			}
		} else {
			start = p;
			while (!field_stop[(unsigned char)*p])
				p++;
			if (*p == '"') {
				*why = "quote inside an unquoted field";
				return -EINVAL;
			}
			end = p;
			while (end > start && is_blank(end[-1]))
				end--;
		}
		if (n < max)
			field[n] = start;
		n++;
		if (!*p) {
			*end = '\0';
			return (int)n;
		}
		p++; /* the comma; end <= the comma, so terminating is safe */
		*end = '\0';
	}
}

/*
 * The next line of a regular file, in r->buf: r->line points at it and
 * *len is its length without the '\n', which is replaced by a NUL.
 * Returns the bytes it took from the file, 0 at the end, or a negative
 * errno.
 */
static ssize_t block_line(struct csv_reader *r, size_t *len)
{
	size_t scan = r->pos; /* where the search for '\n' resumes */
	char *nl;

	for (;;) {
		size_t got;

		nl = NULL;
		if (r->end > scan)
			nl = memchr(r->buf + scan, '\n', r->end - scan);
		if (nl || r->eof)
			break;
		/* Keep the partial line, at the start, with room to read. */
		scan = r->end - r->pos;
		if (r->pos) {
			memmove(r->buf, r->buf + r->pos, scan);
			r->end = scan;
			r->pos = 0;
		}
		if (r->cap - r->end < CSV_BLOCK / 2) {
			size_t cap = r->cap ? r->cap * 2 : CSV_BLOCK;
			char *b = realloc(r->buf, cap);

			if (!b)
				return -ENOMEM;
			r->buf = b;
			r->cap = cap;
		}
		/* One byte kept for the NUL of a last line without '\n'. */
		got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->fp);
		r->end += got;
		if (!got) {
			if (ferror(r->fp))
				return errno ? -errno : -EIO;
			r->eof = 1;
		}
	}
	r->line = r->buf + r->pos;
	if (nl) {
		*nl = '\0';
		*len = (size_t)(nl - r->line);
		r->pos += *len + 1;
		return (ssize_t)*len + 1;
	}
	*len = r->end - r->pos;
	if (!*len)
		return 0;
	r->line[*len] = '\0';
	r->pos = r->end;
	return (ssize_t)*len;
}

int csv_next(struct csv_reader *r)
{
	for (;;) {
		size_t want, len = 0;
		ssize_t got;
		char *p;
		int n;

		if (r->block) {
			got = block_line(r, &len);
			if (got <= 0)
				return (int)got;
		} else {
			got = getline(&r->buf, &r->cap, r->fp);
			if (got < 0) {
				if (ferror(r->fp))
					return errno ? -errno : -EIO;
				return 0;
			}
			r->line = r->buf;
			len = (size_t)got;
			if (len && r->line[len - 1] == '\n')
				r->line[--len] = '\0';
		}
		r->lineno++;
		r->bytes += (unsigned long long)got;
		if (len && r->line[len - 1] == '\r')
			r->line[--len] = '\0';
		if (r->lineno == 1 && len >= 2 &&
		    ((r->line[0] == '\xff' && r->line[1] == '\xfe') ||
		     (r->line[0] == '\xfe' && r->line[1] == '\xff'))) {
			/* Say what it is rather than "NUL byte in line". */
			r->why =
				"UTF-16 text (byte-order mark); convert the file to UTF-8";
			return -EINVAL;
		}
		if (r->lineno == 1 && len >= 3 &&
		    !memcmp(r->line, "\xef\xbb\xbf", 3)) {
			/* A UTF-8 byte-order mark, as Windows editors write. */
			memmove(r->line, r->line + 3, len - 2);
			len -= 3;
		}
		if (strlen(r->line) != len) {
			r->why = "NUL byte in line";
			return -EINVAL;
		}
		for (p = r->line; is_blank(*p); p++)
			;
		if ((r->flags & CSV_SKIP_COMMENTS) && *p == '#' && r->comment)
			r->comment(r->comment_ctx, p, r->lineno);
		if (!*p || ((r->flags & CSV_SKIP_COMMENTS) && *p == '#'))
			continue;
		/*
		 * A line has at most len + 1 fields: room for that many (the
		 * longest line's, a pointer a byte) needs no count of commas.
		 */
		want = len + 1;
		if (want > r->maxfield) {
			char **f;

			if (want > INT_MAX / 2)
				return -ENOMEM;
			f = realloc(r->field, (want + 64) * sizeof(*f));
			if (!f)
				return -ENOMEM;
			r->field = f;
			r->maxfield = (unsigned int)want + 64;
		}
		n = csv_split(r->line, r->field, r->maxfield, &r->why);
		if (n < 0)
			return n;
		r->nfield = (unsigned int)n;
		return n;
	}
}

int csv_find(char *const *field, unsigned int nfield, const char *name)
{
	unsigned int i;

	for (i = 0; i < nfield; i++)
		if (!strcmp(field[i], name))
			return (int)i;
	return -1;
}
