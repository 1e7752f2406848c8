// SPDX-License-Identifier: GPL-2.0
/* Helpers of the joules-train host tests: see train_util.h. */
#include <stdarg.h>

#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"

#define TRAIN_UTIL_C
#include "train_util.h"

/* "# ..." on stdout, as the harness's diagnostics. */
static void __attribute__((format(printf, 1, 2))) DIAG(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

uint64_t rng_u64(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double rng_unif(double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rng_u64() >> 11) * 0x1.0p-53);
}

double rng_gauss(void)
{
	double u = rng_unif(1e-12, 1), v = rng_unif(0, 1);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

FILE *mem_in(const char *text)
{
	return fmemopen((void *)text, strlen(text), "r");
}

char *diag_buf;

size_t diag_len;

void diag_begin(void)
{
	free(diag_buf);
	diag_buf = NULL;
	jt_diag = open_memstream(&diag_buf, &diag_len);
}

const char *diag_end(void)
{
	fclose(jt_diag);
	jt_diag = NULL;
	return diag_buf ? diag_buf : "";
}

int rel_close(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) ||
	       fabs(a - b) < 1e-300;
}

const struct jl_coef truth = {
	.cpu_time_uw = 6000000, /* 6 W per busy CPU */
	.cycles_pj = 1000,
	.instructions_pj = 500,
	.cache_miss_pj = 50000,
	.disk_byte_pj = 10000,
	.net_tx_byte_pj = 20000,
	.net_rx_byte_pj = 15000,
	.pagecache_byte_pj = 2000,
	.idle_uw = 40000000, /* 40 W */
};

struct jt_row *synth_rows(size_t n, const struct jl_coef *c, double noise,
			  unsigned int present)
{
	struct jt_row *r = calloc(n, sizeof(*r));
	size_t i;

	for (i = 0; r && i < n; i++) {
		double len = rng_unif(0.9e9, 1.1e9),
		       busy = rng_unif(0, 2) * len;

		r[i].end_ns = 1796220916000000000LL + (int64_t)i * 1000000000LL;
		r[i].interval_ns = nearbyint(len);
		r[i].f[JL_F_CPU_NS] = nearbyint(busy);
		r[i].f[JL_F_CYCLES] = nearbyint(busy * rng_unif(1.0, 3.5));
		r[i].f[JL_F_INSTR] =
			nearbyint(r[i].f[JL_F_CYCLES] * rng_unif(0.3, 2.5));
		r[i].f[JL_F_MISSES] = nearbyint(rng_unif(0, 2e8) * len * 1e-9);
		r[i].f[JL_F_DISK] =
			rng_unif(0, 1) < 0.3 ? 0 : nearbyint(rng_unif(0, 5e8));
		if (rng_unif(0, 1) < 0.33) {
			r[i].f[JL_F_NET_TX] = nearbyint(rng_unif(0, 2e8));
			r[i].f[JL_F_NET_RX] = nearbyint(rng_unif(0, 3e8));
		}
		r[i].f[JL_F_PAGECACHE] = nearbyint(rng_unif(0, 2e9));
		for (unsigned int j = 0; j < JT_NF; j++)
			if (!(present & (1u << j)))
				r[i].f[j] = 0;
		r[i].meter_uj =
			jt_predict_uj(c, &r[i]) * (1 + noise * rng_gauss());
		r[i].module_uj = -1;
	}
	return r;
}

double coef_err(const struct jl_coef *c, const double *truth6,
		unsigned int mask, unsigned int *worst)
{
	double e = 0;
	unsigned int i;

	for (i = 0; i < JL_NR_COEF; i++) {
		double d;

		if (!(mask & (1u << i)) || truth6[i] == 0)
			continue;
		d = fabs((double)jl_coef_get(c, i) - truth6[i]) / truth6[i];
		if (d >= e) {
			e = d;
			if (worst)
				*worst = i;
		}
	}
	return e;
}

double gen_coef_err(const struct jl_coef *c, const struct gen_opts *g,
		    unsigned int *worst)
{
	double t[JL_NR_COEF];

	gen_effective_truth(g, t);
	return coef_err(c, t, ALL_COEFS, worst);
}

void number_lines(struct jt_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rows[i].line = rows[i].last_line = 2 + i;
}

int rejected_line(const struct jt_report *rep, unsigned long line)
{
	for (size_t i = 0; i < rep->n_outliers_kept; i++)
		if (rep->outliers[i].line == line)
			return 1;
	return 0;
}

char tmpdir[256];

void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

char cli[PATH_MAX + 64];

int find_cli(void)
{
	char exe[PATH_MAX];
	const char *env = getenv("JOULES_TRAIN");
	ssize_t n;
	char *slash;

	if (env) {
		snprintf(cli, sizeof(cli), "%s", env);
		return access(cli, X_OK) == 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	/* tools/testing/unit/build/test_train_* -> user/build/joules-train */
	snprintf(cli, sizeof(cli), "%s/../../../../user/build/joules-train",
		 exe);
	return access(cli, X_OK) == 0;
}

char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (fp) {
		int ch;

		while ((ch = fgetc(fp)) != EOF)
			fputc(ch, out);
		fclose(fp);
	}
	fclose(out);
	return buf;
}

char *cli_out, *cli_err;

void unlink_tmp(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
}

char *slurp_tmp(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (access(path, R_OK))
		return NULL;
	return slurp(path);
}

int run_cli(const char *args)
{
	char cmd[8192];
	int st;

	/* A hang must fail the test, not stall it. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && timeout -k 5 60 '%s' %s >out.txt 2>err.txt",
		 tmpdir, cli, args);
	st = system(cmd);
	free(cli_out);
	free(cli_err);
	snprintf(cmd, sizeof(cmd), "%s/out.txt", tmpdir);
	cli_out = slurp(cmd);
	snprintf(cmd, sizeof(cmd), "%s/err.txt", tmpdir);
	cli_err = slurp(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void write_inputs(const char *sname, const char *pname, size_t n, int ms,
		  int pmu)
{
	/* The first layout's columns (HDR): a recording from before issue 18. */
	unsigned int present =
		pmu ? OLD_FEATURES : (1u << JL_F_CPU_NS) | (1u << JL_F_DISK);
	struct jt_row *rows = synth_rows(n, &truth, 0.003, present);
	char path[600];
	int64_t t = 1796220916000000000LL;
	FILE *s, *p;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, sname);
	s = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, pname);
	p = fopen(path, "w");
	fputs(HDR, s);
	fputs("timestamp,watts\n", p);
	for (i = 0; i < n; i++) {
		int64_t len = (int64_t)rows[i].interval_ns, end = t + len;
		double w = jt_row_watts(&rows[i]);

		if (pmu)
			fprintf(s,
				"%lld,%lld,%lld,rapl,1,%.0f,0,%.0f,%.0f,%.0f,%.0f,%.0f,4\n",
				(long long)end,
				(long long)(end - 1796220916000000000LL),
				(long long)len, rows[i].meter_uj / 2.5,
				rows[i].f[0], rows[i].f[1], rows[i].f[2],
				rows[i].f[3], rows[i].f[4]);
		else
			fprintf(s,
				"%lld,%lld,%lld,model,1,%.0f,0,%.0f,,,,%.0f,4\n",
				(long long)end,
				(long long)(end - 1796220916000000000LL),
				(long long)len, rows[i].meter_uj / 2.5,
				rows[i].f[0], rows[i].f[4]);
		/* Flat power over the interval, 1 us ramps at its ends. */
		if (ms) {
			fprintf(p, "%.3f,%.6f\n", (double)(t + 1000) * 1e-6, w);
			fprintf(p, "%.3f,%.6f\n", (double)(end - 1000) * 1e-6,
				w);
		} else {
			fprintf(p, "%lld.%09lld,%.6f\n",
				(long long)((t + 1000) / 1000000000),
				(long long)((t + 1000) % 1000000000), w);
			fprintf(p, "%lld.%09lld,%.6f\n",
				(long long)((end - 1000) / 1000000000),
				(long long)((end - 1000) % 1000000000), w);
		}
		t = end;
	}
	fclose(s);
	fclose(p);
	free(rows);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gen_files(const char *sname, const char *pname, const struct gen_opts *o)
{
	char sp[600], pp[600];
	FILE *s, *p;

	snprintf(sp, sizeof(sp), "%s/%s", tmpdir, sname);
	snprintf(pp, sizeof(pp), "%s/%s", tmpdir, pname);
	s = fopen(sp, "w");
	p = fopen(pp, "w");
	if (!s || !p || gen_write(o, s, p))
		DIAG("cannot write %s, %s", sp, pp);
	if (s)
		fclose(s);
	if (p)
		fclose(p);
}

int cli_coef(struct jl_coef *c)
{
	const char *p = cli_out, *last = NULL;

	while (p && *p) {
		if (*p != '#')
			last = p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return last && !jl_coef_parse(last, strlen(last), c);
}

void edit_csv(const char *in, const char *out, int line, int field,
	      const char *val)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && awk -F, -v OFS=, 'NR == %d { $%d = \"%s\" } "
		 "{ print }' %s > %s",
		 tmpdir, line, field, val, in, out);
	if (system(cmd))
		DIAG("%s failed", cmd);
}

struct jt_row *gen_rows(const struct gen_opts *g, size_t *n,
			unsigned int *present)
{
	char *sb = NULL, *pb = NULL;
	size_t sl = 0, pl = 0;
	FILE *s = open_memstream(&sb, &sl), *p = open_memstream(&pb, &pl);
	struct jt_samples smp = { 0 };
	struct jt_meter m;
	struct jt_align_stats st;
	struct jt_row *rows = NULL;

	*n = 0;
	gen_write(g, s, p);
	fclose(s);
	fclose(p);
	s = mem_in(sb);
	p = mem_in(pb);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	if (!jt_read_samples(s, "s", &smp, NULL) &&
	    !jt_read_meter(p, "p", &m, NULL))
		jt_align(&smp, &m, 0, 5000000000LL, &rows, n, &st);
	*present = smp.present;
	fclose(s);
	fclose(p);
	jt_samples_free(&smp);
	jt_meter_free(&m);
	free(sb);
	free(pb);
	return rows;
}

int train_banded(struct jt_row *rows, size_t n, unsigned int present,
		 const struct jt_band_opts *bo, struct jt_report *rep,
		 struct jt_band_result *br)
{
	double *w = malloc(n * sizeof(*w));
	struct jt_train_opts o = {
		.method = FIT_NNLS, .folds = 5, .min_samples = 20, .weights = w
	};
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = jt_train(rows, n, present, &o, rep, NULL, NULL);
	o.weights = NULL;
	if (!ret)
		ret = jt_train_bands(rows, n, present, &o, bo, rep, w, br);
	free(w);
	return ret;
}

int file_coef(const char *name, struct jl_coef *c)
{
	char *t = slurp_tmp(name), *p, *last = NULL;
	int ok;

	for (p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (*p != '#')
			last = p;
	ok = last && !jl_coef_parse(last, strlen(last), c);
	free(t);
	return ok;
}

int tt_setup(const char *prog)
{
	const char *seed = getenv("TRAIN_TEST_SEED");

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", prog);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return -1;
	}
	if (seed && *seed)
		rng_state = strtoull(seed, NULL, 0);
	return 0;
}

void tt_cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		DIAG("could not remove %s", tmpdir);
	free(diag_buf);
	diag_buf = NULL;
	free(cli_out);
	free(cli_err);
	cli_out = cli_err = NULL;
}
