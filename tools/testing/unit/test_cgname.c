// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the runtimes' cgroup naming (user/lib/cgname.c): paths
 * as docker, containerd, CRI-O, Podman, the kubelet (both cgroup drivers)
 * and systemd make them, near misses that must not be recognized, and
 * hostile input (long, odd bytes, no slashes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgname.h"
#include "check.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
#define UID_ "1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d"
#define SPOD "0f1e2d3c4b5a69788796a5b4c3d2e1f0" /* a static pod's hash */

struct want {
	const char *path;
	enum cgn_kind kind;
	const char *runtime; /* NULL: none */
	const char *id; /* "" : none */
	const char *uid;
	const char *qos;
	const char *unit;
};

static const struct want cases[] = {
	{ "/", CGN_ROOT, NULL, "", "", NULL, "" },
	{ "", CGN_ROOT, NULL, "", "", NULL, "" },
	{ "//", CGN_ROOT, NULL, "", "", NULL, "" },
	/* docker, both drivers */
	{ "/system.slice/docker-" ID ".scope", CGN_CONTAINER, "docker", ID, "",
	  NULL, "docker-" ID ".scope" },
	{ "/docker/" ID, CGN_CONTAINER, "docker", ID, "", NULL, "" },
	{ "/system.slice/docker.service", CGN_SERVICE, NULL, "", "", NULL,
	  "docker.service" },
	/* containerd: nerdctl, ctr's namespaces */
	{ "/system.slice/nerdctl-" ID ".scope", CGN_CONTAINER, "containerd", ID,
	  "", NULL, "nerdctl-" ID ".scope" },
	{ "/default/" ID, CGN_CONTAINER, "containerd", ID, "", NULL, "" },
	{ "/k8s.io/" ID, CGN_CONTAINER, "containerd", ID, "", NULL, "" },
	/* an id under an unknown parent: a container, runtime unknown */
	{ "/mystuff/" ID, CGN_CONTAINER, NULL, ID, "", NULL, "" },
	/* Podman: root, rootless, conmon, cgroupfs, split (a child) */
	{ "/machine.slice/libpod-" ID ".scope", CGN_CONTAINER, "podman", ID, "",
	  NULL, "libpod-" ID ".scope" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
	  ".scope",
	  CGN_CONTAINER, "podman", ID, "", NULL, "libpod-" ID ".scope" },
	{ "/machine.slice/libpod-conmon-" ID ".scope", CGN_MONITOR, "podman",
	  ID, "", NULL, "libpod-conmon-" ID ".scope" },
	{ "/libpod_parent/libpod-" ID, CGN_CONTAINER, "podman", ID, "", NULL,
	  "" },
	{ "/machine.slice/libpod-" ID ".scope/container", CGN_OTHER, "podman",
	  ID, "", NULL, "libpod-" ID ".scope" },
	{ "/machine.slice/machine-libpod_pod_" ID2 ".slice", CGN_SLICE, NULL,
	  "", "", NULL, "machine-libpod_pod_" ID2 ".slice" },
	/* Kubernetes, systemd driver: classes, pods, containers of each runtime */
	{ "/kubepods.slice", CGN_SLICE, NULL, "", "", NULL, "kubepods.slice" },
	{ "/kubepods.slice/kubepods-burstable.slice", CGN_QOS, NULL, "", "",
	  "burstable", "kubepods-burstable.slice" },
	{ "/kubepods.slice/kubepods-besteffort.slice", CGN_QOS, NULL, "", "",
	  "besteffort", "kubepods-besteffort.slice" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice", CGN_POD, NULL, "", UID,
	  "guaranteed", "kubepods-pod" UID_ ".slice" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice",
	  CGN_POD, NULL, "", UID, "burstable",
	  "kubepods-burstable-pod" UID_ ".slice" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope",
	  CGN_CONTAINER, "containerd", ID, UID, "burstable",
	  "cri-containerd-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope",
	  CGN_CONTAINER, "cri-o", ID, UID, "besteffort", "crio-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-conmon-" ID ".scope",
	  CGN_MONITOR, "cri-o", ID, UID, "besteffort",
	  "crio-conmon-" ID ".scope" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope",
	  CGN_CONTAINER, "docker", ID, UID, "guaranteed",
	  "docker-" ID ".scope" },
	/* a static pod's UID is a 32-hex hash */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" SPOD
	  ".slice",
	  CGN_POD, NULL, "", SPOD, "burstable",
	  "kubepods-burstable-pod" SPOD ".slice" },
	/* the kubelet under a --cgroup-root (kind, some distributions) */
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID
	  ".scope",
	  CGN_CONTAINER, "containerd", ID, UID, "besteffort",
	  "cri-containerd-" ID ".scope" },
	/* cgroupfs driver */
	{ "/kubepods", CGN_OTHER, NULL, "", "", NULL, "" },
	{ "/kubepods/burstable", CGN_QOS, NULL, "", "", "burstable", "" },
	{ "/kubepods/burstable/pod" UID, CGN_POD, NULL, "", UID, "burstable",
	  "" },
	{ "/kubepods/besteffort/pod" UID "/" ID, CGN_CONTAINER, NULL, ID, UID,
	  "besteffort", "" },
	{ "/kubepods/pod" UID "/" ID, CGN_CONTAINER, NULL, ID, UID,
	  "guaranteed", "" },
	{ "/kubepods/burstable/pod" UID "/crio-" ID, CGN_CONTAINER, "cri-o", ID,
	  UID, "burstable", "" },
	/* kind: a node that is a docker container; the pods inside start afresh */
	{ "/system.slice/docker-" ID2 ".scope/kubepods/burstable/pod" UID
	  "/" ID,
	  CGN_CONTAINER, NULL, ID, UID, "burstable", "docker-" ID2 ".scope" },
	{ "/system.slice/docker-" ID2 ".scope/kubepods/burstable/pod" UID,
	  CGN_POD, NULL, "", UID, "burstable", "docker-" ID2 ".scope" },
	/* docker in docker: the innermost container */
	{ "/system.slice/docker-" ID2 ".scope/docker/" ID, CGN_CONTAINER,
	  "docker", ID, "", NULL, "docker-" ID2 ".scope" },
	/* systemd units */
	{ "/system.slice", CGN_SLICE, NULL, "", "", NULL, "system.slice" },
	{ "/system.slice/nginx.service", CGN_SERVICE, NULL, "", "", NULL,
	  "nginx.service" },
	{ "/user.slice/user-1000.slice/session-2.scope", CGN_SCOPE, NULL, "",
	  "", NULL, "session-2.scope" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/"
	  "app-gnome-firefox-4242.scope",
	  CGN_SCOPE, NULL, "", "", NULL, "app-gnome-firefox-4242.scope" },
	{ "/system.slice/systemd-journald.socket", CGN_OTHER, NULL, "", "",
	  NULL, "systemd-journald.socket" },
	{ "/system.slice/nginx.service/workers", CGN_OTHER, NULL, "", "", NULL,
	  "nginx.service" },
	{ "/init.scope", CGN_SCOPE, NULL, "", "", NULL, "init.scope" },
	/* near misses: not recognized */
	{ "/system.slice/docker-" ID "0.scope", CGN_SCOPE, NULL, "", "", NULL,
	  "docker-" ID "0.scope" },
	{ "/system.slice/docker-0123456789ABCDEF0123456789abcdef0123456789abcdef"
	  "0123456789abcdef.scope",
	  CGN_SCOPE, NULL, "", "", NULL,
	  "docker-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef.scope" },
	{ "/system.slice/docker-" ID, CGN_OTHER, NULL, "", "", NULL,
	  "system.slice" },
	{ "/docker/" ID "/", CGN_CONTAINER, "docker", ID, "", NULL, "" },
	{ "/docker/abc", CGN_OTHER, NULL, "", "", NULL, "" },
	/* "pod" slices outside kubepods, malformed UIDs and classes */
	{ "/foo.slice/foo-pod" UID_ ".slice", CGN_SLICE, NULL, "", "", NULL,
	  "foo-pod" UID_ ".slice" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  "1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6.slice",
	  CGN_SLICE, NULL, "", "", "burstable",
	  "kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6.slice" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID
	  ".slice",
	  CGN_SLICE, NULL, "", "", "burstable",
	  "kubepods-burstable-pod" UID ".slice" },
	{ "/kubepods.slice/kubepods-weird.slice/kubepods-weird-pod" UID_
	  ".slice",
	  CGN_SLICE, NULL, "", "", NULL, "kubepods-weird-pod" UID_ ".slice" },
	{ "/kubepods/burstable/pod" UID_, CGN_OTHER, NULL, "", "", "burstable",
	  "" },
	{ "/burstable/pod" UID, CGN_OTHER, NULL, "", "", NULL, "" },
	{ ".service", CGN_OTHER, NULL, "", "", NULL, "" },
	{ "no-slash.scope", CGN_SCOPE, NULL, "", "", NULL, "no-slash.scope" },
};

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* N paths of docker, containerd, CRI-O, Podman, kubelet (both drivers), systemd, near misses */
TEST(table)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct want *w = &cases[i];
		struct cgname n;

		cgname_parse(w->path, &n);
		CHECK(n.kind == w->kind, "%s: kind %s, want %s", w->path,
		      cgn_kind_names[n.kind], cgn_kind_names[w->kind]);
		CHECK(str_eq(n.runtime, w->runtime), "%s: runtime %s, want %s",
		      w->path, n.runtime ? n.runtime : "(none)",
		      w->runtime ? w->runtime : "(none)");
		CHECK(!strcmp(n.container_id, w->id), "%s: id '%s'", w->path,
		      n.container_id);
		CHECK(!strcmp(n.pod_uid, w->uid), "%s: pod '%s'", w->path,
		      n.pod_uid);
		CHECK(str_eq(n.qos, w->qos), "%s: qos %s, want %s", w->path,
		      n.qos ? n.qos : "(none)", w->qos ? w->qos : "(none)");
		CHECK(!strcmp(n.unit, w->unit), "%s: unit '%s'", w->path,
		      n.unit);
	}
	TH_LOG("%zu paths of docker, containerd, CRI-O, Podman, kubelet (both drivers), systemd, near misses",
	       ARRAY_SIZE(cases));
}

/*
 * in_cgroupfs_pod: a bare id directly in a cgroupfs pod only; kube_nested:
 * a kubepods tree below the first component (kind, or a forgery).
 */
TEST(pod_flags)
{
	static const struct {
		const char *path;
		bool cgroupfs, nested;
	} f[] = {
		{ "/kubepods/besteffort/pod" UID "/" ID, true, false },
		{ "/kubepods/pod" UID "/" ID, true, false },
		{ "/kubepods/burstable/pod" UID "/crio-" ID, false, false },
		{ "/kubepods/burstable/pod" UID, false, false },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/" ID, false,
		  false },
		{ "/kubepods/burstable/pod" UID "/" ID2 "/" ID, false, false },
		{ "/system.slice/docker-" ID2
		  ".scope/kubepods/burstable/pod" UID "/" ID,
		  true, true },
		{ "/kubepods/burstable/pod" UID "/" ID2 "/kubepods/pod" UID
		  "/" ID,
		  true, true },
		{ "/system.slice/docker-" ID2 ".scope", false, false },
	};

	/*
	 * Pods and classes only where the kubelet makes them; containers'
	 * places: directly in a pod, or at which depth.
	 */
	static const struct {
		const char *path;
		enum cgn_kind kind;
		bool in_pod;
		unsigned int depth;
	} p[] = {
		{ "/kubepods/burstable/pod" UID "/" ID, CGN_CONTAINER, true,
		  3 },
		{ "/kubepods.slice/kubepods-pod" UID_
		  ".slice/cri-containerd-" ID ".scope",
		  CGN_CONTAINER, true, 2 },
		{ "/system.slice/docker-" ID ".scope", CGN_CONTAINER, false,
		  1 },
		{ "/system.slice/docker-" ID ".scope/init.scope", CGN_SCOPE,
		  false, 1 },
		{ "/system.slice/x.service/" ID, CGN_CONTAINER, false, 2 },
		{ "/kubepods/burstable/pod" UID "/" ID2 "/pod" UID, CGN_OTHER,
		  true, 3 },
		{ "/kubepods/burstable/pod" UID "/" ID2 "/burstable", CGN_OTHER,
		  true, 3 },
		{ "/kubepods/burstable/burstable", CGN_OTHER, false, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		struct cgname n;

		cgname_parse(p[i].path, &n);
		CHECK(n.kind == p[i].kind, "%s: kind %s", p[i].path,
		      cgn_kind_names[n.kind]);
		if (n.container_id[0])
			CHECK(n.in_pod == p[i].in_pod &&
				      n.container_depth == p[i].depth,
			      "%s: in_pod %d, depth %u", p[i].path, n.in_pod,
			      n.container_depth);
	}
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		struct cgname n;

		cgname_parse(f[i].path, &n);
		CHECK(n.in_cgroupfs_pod == f[i].cgroupfs,
		      "%s: in_cgroupfs_pod %d", f[i].path, n.in_cgroupfs_pod);
		CHECK(n.kube_nested == f[i].nested, "%s: kube_nested %d",
		      f[i].path, n.kube_nested);
	}
}

/* depth counts components below the root */
TEST(depth)
{
	CHECK(cgname_depth("/") == 0, "/");
	CHECK(cgname_depth("") == 0, "empty");
	CHECK(cgname_depth(NULL) == 0, "NULL");
	CHECK(cgname_depth("/a") == 1, "/a");
	CHECK(cgname_depth("a/b") == 2, "a/b");
	CHECK(cgname_depth("//a//b/") == 2, "//a//b/");
	CHECK(cgname_depth("/kubepods.slice/kubepods-burstable.slice/x/y") == 4,
	      "4");
}

/* container ids are exactly 64 lowercase hex digits */
TEST(ids)
{
	CHECK(cgname_is_id(ID, 64), "id");
	CHECK(!cgname_is_id(ID, 63), "short");
	CHECK(!cgname_is_id(
		      "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		      64),
	      "g");
	CHECK(!cgname_is_id(
		      "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		      64),
	      "upper case");
}

/* Paths no runtime makes: long, deep, odd bytes. Nothing may overflow. */
TEST(hostile)
{
	size_t big = 1 << 16;
	char *p = malloc(big + 1);
	struct cgname n;
	uint64_t x = 0x243f6a8885a308d3ULL;

	if (!p)
		SKIP(return, "out of memory");
	/* One component far longer than any unit name, ending like a scope. */
	memset(p, 'a', big);
	memcpy(p + big - 6, ".scope", 6);
	p[0] = '/';
	p[big] = 0;
	cgname_parse(p, &n);
	CHECK(!n.unit[0] && n.kind == CGN_OTHER, "long name: unit '%.20s'",
	      n.unit);
	/* Many levels. */
	for (size_t i = 0; i < big; i += 2) {
		p[i] = '/';
		p[i + 1] = 'x';
	}
	p[big] = 0;
	cgname_parse(p, &n);
	CHECK(cgname_depth(p) == big / 2, "depth %u", cgname_depth(p));
	/* Random bytes, slashes and pieces of real names mixed. */
	for (int round = 0; round < 20000; round++) {
		static const char *const bits[] = {
			"/",	   "kubepods",
			".slice",  "-pod",
			UID_,	   UID,
			"docker-", ID,
			".scope",  "crio-conmon-",
			"libpod-", "burstable",
			"_",	   "-",
			"\xff",	   "\n",
		};
		size_t len = 0;

		while (len < 300) {
			const char *b;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			b = bits[x % ARRAY_SIZE(bits)];
			if (len + strlen(b) >= 300)
				break;
			memcpy(p + len, b, strlen(b));
			len += strlen(b);
		}
		p[len] = 0;
		cgname_parse(p, &n);
		if (n.container_id[0] &&
		    !cgname_is_id(n.container_id,
				  (unsigned int)strlen(n.container_id)))
			CHECK(0, "bad id from '%s'", p);
		if (n.pod_uid[0] && strlen(n.pod_uid) != 36 &&
		    strlen(n.pod_uid) != 32)
			CHECK(0, "bad uid from '%s'", p);
		if (n.kind >= CGN_NR_KINDS)
			CHECK(0, "bad kind");
	}
	free(p);
}

TEST_HARNESS_MAIN
