/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Line-oriented CSV reading for the joules tools: one record per line
 * (quoted fields may contain commas and doubled quotes, but not newlines),
 * CR LF or LF line ends, blanks around unquoted fields trimmed, empty lines
 * skipped, a UTF-8 byte-order mark at the start of the file ignored (UTF-16
 * is reported as a malformed first line). Every record carries its 1-based line number so that tools can
 * report "file:line: reason" for bad input instead of dropping it.
 */
#ifndef JOULES_CSV_H
#define JOULES_CSV_H

#include <stdio.h>

#define CSV_SKIP_COMMENTS 0x1 /* also skip lines whose first non-blank is '#' */

struct csv_reader {
	FILE *fp;
	const char *name; /* file name for messages */
	unsigned long lineno; /* line number of the current record */
	unsigned int flags;
	char *line; /* current line (in buf), split in place */
	char *buf; /* getline()'s line, or a block of a regular file */
	size_t cap; /* allocated size of buf */
	size_t pos, end; /* block: the next line's start, the data's end */
	int block; /* a regular file: read a block at a time */
	int eof; /* block: the file has no more */
	char **field; /* field[0..nfield-1] point into line */
	unsigned int nfield;
	unsigned int maxfield; /* allocated size of field[] */
	const char *why; /* reason of the last -EINVAL from csv_next() */
	unsigned long long bytes; /* bytes read so far (for progress) */
	/* CSV_SKIP_COMMENTS: each skipped comment line, if set (after csv_init()). */
	void (*comment)(void *ctx, const char *line, unsigned long lineno);
	void *comment_ctx;
};

/* Start reading fp (not closed by csv_free()); name is used in messages. */
void csv_init(struct csv_reader *r, FILE *fp, const char *name,
	      unsigned int flags);

/*
 * Read and split the next record. Returns the number of fields (>= 1), 0 at
 * end of file, -EINVAL for a malformed line (r->why says why; r->lineno is
 * its line; the caller may report it and call csv_next() again), or another
 * negative errno for a read error.
 */
int csv_next(struct csv_reader *r);

void csv_free(struct csv_reader *r);

/*
 * Split line in place at commas. Stores up to max field pointers; returns
 * the number of fields (which may exceed max: the rest are not stored), or
 * -EINVAL with *why set for an unterminated quote or junk after a quote.
 */
int csv_split(char *line, char **field, unsigned int max, const char **why);

/* Index of the field equal to name, or -1. */
int csv_find(char *const *field, unsigned int nfield, const char *name);

#endif /* JOULES_CSV_H */
