// SPDX-License-Identifier: GPL-2.0
/*
 * Container runtimes', the kubelet's and systemd's cgroup naming (cgname.h).
 *
 * The path is read component by component, from the root down, so that
 * what a component means can depend on what is above it (a bare id is a
 * docker container under /docker, a pod's container under a cgroupfs pod)
 * and the innermost container, pod and unit win. Every id is checked for
 * its exact form: a name that merely looks like a runtime's is not taken
 * for one.
 */
#include <string.h>

#include "cgname.h"

const char *const cgn_kind_names[CGN_NR_KINDS] = {
	[CGN_OTHER] = "other",
	[CGN_ROOT] = "root",
	[CGN_CONTAINER] = "container",
	[CGN_MONITOR] = "monitor",
	[CGN_POD] = "pod",
	[CGN_QOS] = "qos",
	[CGN_SERVICE] = "service",
	[CGN_SCOPE] = "scope",
	[CGN_SLICE] = "slice",
};

/* A path component: not NUL-terminated. */
struct comp {
	const char *s;
	unsigned int len;
};

static bool is_lhex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool cgname_is_id(const char *s, unsigned int len)
{
	if (len != CGN_ID_LEN)
		return false;
	for (unsigned int i = 0; i < len; i++)
		if (!is_lhex(s[i]))
			return false;
	return true;
}

static bool eq(struct comp c, const char *s)
{
	return c.len == strlen(s) && !memcmp(c.s, s, c.len);
}

static bool has_prefix(struct comp c, const char *p)
{
	size_t n = strlen(p);

	return c.len >= n && !memcmp(c.s, p, n);
}

static bool has_suffix(struct comp c, const char *p)
{
	size_t n = strlen(p);

	return c.len >= n && !memcmp(c.s + c.len - n, p, n);
}

/*
 * "<prefix><64 hex><suffix>", suffix optional when `opt` (CRI-O and
 * Podman drop ".scope" with the cgroupfs driver): the id's start, or NULL.
 */
static const char *id_between(struct comp c, const char *prefix,
			      const char *suffix, bool opt)
{
	size_t p = strlen(prefix), s = strlen(suffix);

	if (!has_prefix(c, prefix))
		return NULL;
	if (c.len == p + CGN_ID_LEN && opt)
		s = 0;
	else if (c.len != p + CGN_ID_LEN + s || !has_suffix(c, suffix))
		return NULL;
	return cgname_is_id(c.s + p, CGN_ID_LEN) ? c.s + p : NULL;
}

/*
 * A pod UID as the kubelet writes it: 8-4-4-4-12 lowercase hex, with `sep`
 * ('_' for systemd, '-' for cgroupfs) between the groups, or 32 hex (the
 * config hash of a static pod). Copied into out with dashes.
 */
static bool pod_uid(const char *s, unsigned int len, char sep, char *out)
{
	if (len == 32) {
		for (unsigned int i = 0; i < len; i++)
			if (!is_lhex(s[i]))
				return false;
		memcpy(out, s, len);
		out[len] = 0;
		return true;
	}
	if (len != CGN_UID_LEN)
		return false;
	for (unsigned int i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != sep : !is_lhex(s[i]))
			return false;
		out[i] = dash ? '-' : s[i];
	}
	out[len] = 0;
	return true;
}

/* The container runtimes' own names, with the runtime and the kind. */
static const struct {
	const char *prefix, *suffix;
	bool suffix_optional;
	const char *runtime;
	enum cgn_kind kind;
} scopes[] = {
	/* Monitors first: "crio-" is a prefix of "crio-conmon-". */
	{ "crio-conmon-", ".scope", true, "cri-o", CGN_MONITOR },
	{ "libpod-conmon-", ".scope", true, "podman", CGN_MONITOR },
	{ "docker-", ".scope", false, "docker", CGN_CONTAINER },
	{ "cri-containerd-", ".scope", false, "containerd", CGN_CONTAINER },
	{ "nerdctl-", ".scope", false, "containerd", CGN_CONTAINER },
	{ "crio-", ".scope", true, "cri-o", CGN_CONTAINER },
	{ "libpod-", ".scope", true, "podman", CGN_CONTAINER },
};

/* Who runs a bare 64-hex cgroup, from its parent's name (cgroupfs drivers). */
static const char *bare_runtime(struct comp parent)
{
	if (eq(parent, "docker"))
		return "docker";
	/* containerd's namespaces: ctr and nerdctl's default, the CRI's. */
	if (eq(parent, "default") || eq(parent, "k8s.io"))
		return "containerd";
	return NULL;
}

static const char *const unit_suffixes[] = { ".service", ".scope", ".slice",
					     ".socket",	 ".mount", ".swap" };

/* The classes below kubepods; guaranteed pods sit in its root. */
static const struct {
	const char *name, *slice;
} qos_classes[] = {
	{ "burstable", "kubepods-burstable.slice" },
	{ "besteffort", "kubepods-besteffort.slice" },
};

/* The state of the walk down the path. */
struct walk {
	struct cgname *n;
	struct comp parent;
	bool kube; /* inside a kubepods tree */
	bool kube_root; /* parent is the kubepods tree's root */
	bool qos; /* parent is a QoS class of the kubepods tree */
	bool pod; /* parent is a pod */
	bool cgroupfs_pod; /* parent is a cgroupfs-driver pod ("pod<uid>") */
	unsigned int depth; /* components before this one */
};

/* kubepods.slice (or a prefixed one, e.g. kubelet-kubepods.slice) or kubepods. */
static bool kube_root(struct comp c)
{
	return eq(c, "kubepods") || eq(c, "kubepods.slice") ||
	       has_suffix(c, "-kubepods.slice");
}

/*
 * A QoS class: systemd's "...kubepods-burstable.slice", cgroupfs'
 * "kubepods/burstable"; only directly in the tree's root, where the
 * kubelet makes them.
 */
static const char *qos_class(const struct walk *w, struct comp c)
{
	if (!w->kube_root)
		return NULL;
	for (size_t i = 0; i < sizeof(qos_classes) / sizeof(qos_classes[0]);
	     i++)
		if (has_suffix(c, qos_classes[i].slice) ||
		    eq(c, qos_classes[i].name))
			return qos_classes[i].name;
	return NULL;
}

/* The class a systemd pod slice's name gives before its "-pod<uid>". */
static const char *pod_slice_qos(struct comp pre)
{
	if (has_suffix(pre, "kubepods"))
		return "guaranteed";
	for (size_t i = 0; i < sizeof(qos_classes) / sizeof(qos_classes[0]);
	     i++) {
		/* "kubepods-burstable" is the slice's name without ".slice". */
		struct comp s = { qos_classes[i].slice,
				  (unsigned int)strlen(qos_classes[i].slice) -
					  6 };

		if (pre.len >= s.len &&
		    !memcmp(pre.s + pre.len - s.len, s.s, s.len))
			return qos_classes[i].name;
	}
	return NULL;
}

/*
 * A pod: "...kubepods[-QOS]-pod<uid>.slice" (systemd driver), or
 * "pod<uid>" inside the kubepods tree (cgroupfs driver). Sets the UID and
 * the class.
 */
static bool pod(struct walk *w, struct comp c)
{
	struct cgname *n = w->n;
	const char *qos;
	char uid[CGN_UID_LEN + 1];

	/* Only where the kubelet makes pods: in the root or a class. */
	if (!w->kube || !(w->kube_root || w->qos))
		return false;
	if (has_suffix(c, ".slice")) {
		struct comp name = { c.s, c.len - 6 };
		int i;

		/* The last "-pod" starts the UID; what is before names the class. */
		for (i = (int)name.len - 4; i >= 0; i--)
			if (!memcmp(name.s + i, "-pod", 4))
				break;
		if (i < 0 || !pod_uid(name.s + i + 4,
				      name.len - (unsigned int)i - 4, '_', uid))
			return false;
		qos = pod_slice_qos((struct comp){ name.s, (unsigned int)i });
		if (!qos)
			return false;
	} else {
		if (!has_prefix(c, "pod") ||
		    !pod_uid(c.s + 3, c.len - 3, '-', uid))
			return false;
		/* Guaranteed pods sit directly in the tree's root. */
		qos = w->kube_root ? "guaranteed" : n->qos;
	}
	memcpy(n->pod_uid, uid, sizeof(uid));
	n->qos = qos;
	return true;
}

/* A container's own cgroup (or its monitor's): sets id, runtime and kind. */
static bool container(struct walk *w, struct comp c)
{
	struct cgname *n = w->n;
	const char *id;

	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		id = id_between(c, scopes[i].prefix, scopes[i].suffix,
				scopes[i].suffix_optional);
		if (!id)
			continue;
		memcpy(n->container_id, id, CGN_ID_LEN);
		n->container_id[CGN_ID_LEN] = 0;
		n->runtime = scopes[i].runtime;
		n->in_cgroupfs_pod = false;
		n->in_pod = w->pod;
		n->container_depth = w->depth;
		n->kind = scopes[i].kind;
		return true;
	}
	if (!cgname_is_id(c.s, c.len))
		return false;
	memcpy(n->container_id, c.s, CGN_ID_LEN);
	n->container_id[CGN_ID_LEN] = 0;
	/* In a cgroupfs pod the CRI runtime is not named. */
	n->runtime = n->pod_uid[0] && w->kube ? NULL : bare_runtime(w->parent);
	n->in_cgroupfs_pod = w->cgroupfs_pod;
	n->in_pod = w->pod;
	n->container_depth = w->depth;
	n->kind = CGN_CONTAINER;
	return true;
}

/* A systemd unit name: sets unit, and the kind if nothing else did. */
static void unit(struct cgname *n, struct comp c)
{
	static const enum cgn_kind kinds[] = { CGN_SERVICE, CGN_SCOPE,
					       CGN_SLICE };

	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]);
	     i++) {
		/* A name and its suffix, short enough for systemd. */
		if (c.len <= strlen(unit_suffixes[i]) ||
		    c.len >= CGN_UNIT_LEN || !has_suffix(c, unit_suffixes[i]))
			continue;
		memcpy(n->unit, c.s, c.len);
		n->unit[c.len] = 0;
		if (n->kind == CGN_OTHER &&
		    i < sizeof(kinds) / sizeof(kinds[0]))
			n->kind = kinds[i];
		return;
	}
}

/* One component, its parent in w->parent. */
static void step(struct walk *w, struct comp c)
{
	struct cgname *n = w->n;
	bool root = kube_root(c), is_qos = false, is_pod = false;
	bool cgroupfs_pod = false;
	const char *qos;

	n->kind = CGN_OTHER;
	if (root) {
		/*
		 * A kubepods tree starts afresh: a pod in a node that is
		 * itself a container (kind) is not inside that container
		 * as far as its own containers go.
		 */
		w->kube = true;
		n->kube_nested = w->depth > 0;
		n->container_id[0] = 0;
		n->runtime = NULL;
		n->in_cgroupfs_pod = false;
		n->pod_uid[0] = 0;
		n->qos = NULL;
	} else if (w->kube && (qos = qos_class(w, c))) {
		n->qos = qos;
		n->kind = CGN_QOS;
		is_qos = true;
	} else if (pod(w, c)) {
		is_pod = true;
		n->kind = CGN_POD;
		n->container_id[0] = 0;
		n->runtime = NULL;
		n->in_cgroupfs_pod = false;
		cgroupfs_pod = !has_suffix(c, ".slice");
	} else {
		container(w, c);
	}
	unit(n, c);
	w->kube_root = root;
	w->qos = is_qos;
	w->pod = is_pod;
	w->cgroupfs_pod = cgroupfs_pod;
	w->parent = c;
	w->depth++;
}

void cgname_parse(const char *path, struct cgname *n)
{
	struct walk w = { .n = n };
	const char *p = path ? path : "";

	memset(n, 0, sizeof(*n));
	n->kind = CGN_ROOT;
	for (;;) {
		struct comp c;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c.s = p;
		while (*p && *p != '/')
			p++;
		c.len = (unsigned int)(p - c.s);
		step(&w, c);
	}
}

unsigned int cgname_depth(const char *path)
{
	unsigned int d = 0;

	for (const char *p = path; p && *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		d++;
		while (*p && *p != '/')
			p++;
	}
	return d;
}
