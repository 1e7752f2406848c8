// SPDX-License-Identifier: GPL-2.0
/*
 * Reads a meter CSV with joules-train's own reader (user/joules-train/
 * meter.c, jt_read_meter(): what `joules-train --pdu FILE` runs) and
 * prints what it accepted, one "NS WATTS" line per reading; exits 1 when
 * any line was refused. run-host.sh checks joules-meterd --csv with it.
 */
#include <stdio.h>
#include <string.h>

#include "fit.h"
#include "train.h"

/* fit.c's, for util.c's jt_median(), which the reader does not call. */
double fit_kth(double *v, size_t n, size_t k)
{
	(void)n;
	return v[k];
}

/* samples.c's, for the progress display only. */
unsigned long long jt_file_size(FILE *fp)
{
	(void)fp;
	return 0;
}

int main(int argc, char **argv)
{
	struct jt_progress pr;
	struct jt_meter m;
	FILE *fp;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: csv_check FILE\n");
		return 2;
	}
	fp = fopen(argv[1], "r");
	if (!fp) {
		perror(argv[1]);
		return 2;
	}
	memset(&pr, 0, sizeof(pr));
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	r = jt_read_meter(fp, argv[1], &m, &pr);
	fclose(fp);
	for (size_t i = 0; i < m.n; i++)
		printf("%lld %.6f\n", (long long)m.t[i], m.w[i]);
	fprintf(stderr, "csv_check: %zu readings, %lu bad lines\n", m.n,
		m.st.bad);
	r = r || m.st.bad || !m.n;
	jt_meter_free(&m);
	return r ? 1 : 0;
}
