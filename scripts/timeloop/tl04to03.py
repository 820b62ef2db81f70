#!/usr/bin/env python3
"""Convert Timeloop v0.4 (timeloopfe-style) input YAML files into the legacy
v0.3 tree format that the Timeloop v3.0.3 C++ binaries read directly.

Usage: tl04to03.py [--no-arch-constraints] OUT.yaml IN1.yaml [IN2.yaml ...]

--no-arch-constraints: do not emit per-node v0.4 `constraints` as
  arch_constraints (used for timeloop-model: v3.0.3 checks them strictly,
  unit-factor loops included, and rejects mappings that newer Timeloop accepts).

All inputs are merged (top-level keys), converted and written to OUT.yaml.
Inputs that are already in the legacy format pass through unchanged.

What is converted:
  architecture: version 0.4 `nodes` (!Container / !Component / !Parallel)
      -> `subtree`/`local` tree. A container with spatial fan-out N
      (meshX*meshY) becomes subtree `name[0..N-1]`; as timeloopfe does, a
      dummy storage level `inter_<name>_spatial` is inserted above it
      (zero energy; bypasses everything unless the mapping says otherwise).
      Components below get meshX/meshY attributes (cumulative fan-out).
      Per-node `constraints` -> `arch_constraints` (mapper).
  problem: data_spaces -> data-spaces, read_write -> read-write.
  mapping / mapspace_constraints: type dataspace -> bypass; lists of factors /
      permutation -> strings; target <container> -> inter_<container>_spatial.
  mapper: underscore keys -> hyphen keys (num_threads, optimization_metric(s),
      victory_condition, live_status, ...); algorithm names likewise.
  ERT / ART: passed through (Timeloop v3.0.3 reads ERT version 0.4 itself).
"""
import sys
import yaml


class Loader(yaml.SafeLoader):
    pass


def _tagged(loader, tag_suffix, node):
    if isinstance(node, yaml.MappingNode):
        d = loader.construct_mapping(node, deep=True)
    elif isinstance(node, yaml.SequenceNode):
        d = {"nodes": loader.construct_sequence(node, deep=True)}
    else:
        d = {"value": loader.construct_scalar(node)}
    d["_tag"] = tag_suffix
    return d


Loader.add_multi_constructor("!", _tagged)


class Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


def merge(dst, src):
    for k, v in src.items():
        if k in dst and isinstance(dst[k], dict) and isinstance(v, dict):
            merge(dst[k], v)
        else:
            dst[k] = v


def flatten_nodes(nodes):
    out = []
    for n in nodes or []:
        tag = n.get("_tag", "")
        if tag in ("Parallel", "Hierarchical", "Nothing") or ("nodes" in n and tag != "Container"):
            out.extend(flatten_nodes(n.get("nodes")))
        else:
            out.append(n)
    return out


def dummy_name(container):
    return "inter_%s_spatial" % container


def as_factor_str(v):
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    return v


def as_perm_str(v):
    if isinstance(v, list):
        return "".join(str(x) for x in v)
    return v


def convert_directive(d, container_map):
    d = dict(d)
    if d.get("type") == "dataspace":
        d["type"] = "bypass"
    if "target" in d and d["target"] in container_map:
        d["target"] = container_map[d["target"]]
    if "factors" in d:
        d["factors"] = as_factor_str(d["factors"])
    if "permutation" in d:
        d["permutation"] = as_perm_str(d["permutation"])
    for k in ("keep", "bypass"):
        if k in d and d[k] is None:
            d[k] = []
    return d


def convert_arch(arch, ctx):
    if not isinstance(arch, dict) or "nodes" not in arch:
        return arch
    seq = flatten_nodes(arch["nodes"])
    root = None
    cur = None
    cum_x = cum_y = 1
    arch_constraints = []
    for n in seq:
        tag = n.get("_tag")
        name = n.get("name")
        cons = n.get("constraints") or {}
        if tag == "Container":
            sp = n.get("spatial") or {}
            sx, sy = int(sp.get("meshX", 1)), int(sp.get("meshY", 1))
            fan = sx * sy
            if fan > 1 and cur is not None:
                dn = dummy_name(name)
                ctx["container_map"][name] = dn
                ctx["dummies"].append(dn)
                attrs = {"depth": 1048576, "datawidth": 8, "width": 8, "block-size": 1,
                         "vector-access-energy": 0.0, "addr-gen-energy": 0.0}
                if cum_x * cum_y > 1:
                    attrs["meshX"] = cum_x
                    attrs["meshY"] = cum_y
                cur.setdefault("local", []).append(
                    {"name": dn, "class": "dummy_storage", "attributes": attrs})
                for ctype, cval in cons.items():
                    c = {"target": dn, "type": ctype}
                    c.update(cval or {})
                    arch_constraints.append(c)
            new = {"name": name + ("[0..%d]" % (fan - 1) if fan > 1 else "")}
            if n.get("attributes"):
                new["attributes"] = dict(n["attributes"])
            cum_x *= sx
            cum_y *= sy
            if root is None:
                root = new
            else:
                cur["subtree"] = [new]
            cur = new
        else:
            if cur is None:
                root = cur = {"name": "system"}
            e = {"name": name, "class": n.get("class", "")}
            if n.get("subclass"):
                e["subclass"] = n["subclass"]
            attrs = dict(n.get("attributes") or {})
            if n.get("spatial"):
                sys.stderr.write("tl04to03: WARNING: spatial on component %s ignored\n" % name)
            if cum_x * cum_y > 1:
                attrs.setdefault("meshX", cum_x)
                attrs.setdefault("meshY", cum_y)
            e["attributes"] = attrs
            cur.setdefault("local", []).append(e)
            for ctype, cval in cons.items():
                c = {"target": name, "type": ctype}
                c.update(cval or {})
                arch_constraints.append(c)
    ctx["arch_constraints"] = arch_constraints
    return {"version": 0.3, "subtree": [root]}


def convert_problem(p):
    if not isinstance(p, dict):
        return p
    shape = p.get("shape")
    if isinstance(shape, dict) and "data_spaces" in shape:
        shape["data-spaces"] = shape.pop("data_spaces")
    if isinstance(shape, dict):
        for ds in shape.get("data-spaces", []):
            if "read_write" in ds:
                ds["read-write"] = ds.pop("read_write")
    return p


MAPPER_KEYS = {
    "num_threads": "num-threads", "victory_condition": "victory-condition",
    "live_status": "live-status", "sync_interval": "sync-interval",
    "log_interval": "log-interval", "log_oaves": "log-oaves",
    "log_oaves_mappings": "log-oaves-mappings", "log_stats": "log-stats",
    "log_suboptimal": "log-suboptimal", "search_size": "search-size",
    "penalize_consecutive_bypass_fails": "penalize-consecutive-bypass-fails",
    "emit_whoop_nest": "emit-whoop-nest", "max_permutations_per_if_visit": "max-permutations-per-if-visit",
}


def convert_mapper(m):
    if not isinstance(m, dict):
        return m
    out = {}
    for k, v in m.items():
        if k in ("optimization_metric", "optimization_metrics", "optimization-metric"):
            out["optimization-metrics"] = v if isinstance(v, list) else [v]
        elif k == "algorithm" and isinstance(v, str):
            out[k] = v.replace("_", "-")
        else:
            out[MAPPER_KEYS.get(k, k)] = v
    return out


def convert_directive_list(lst, ctx):
    return [convert_directive(d, ctx["container_map"]) for d in (lst or [])]


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    args = sys.argv[1:]
    no_arch_constraints = False
    if args and args[0] == "--no-arch-constraints":
        no_arch_constraints = True
        args = args[1:]
    out_path, ins = args[0], args[1:]
    doc = {}
    for f in ins:
        with open(f) as fh:
            d = yaml.load(fh, Loader=Loader)
        if isinstance(d, dict):
            merge(doc, d)
    ctx = {"container_map": {}, "dummies": [], "arch_constraints": []}
    for k in ("architecture", "arch"):
        if k in doc:
            doc[k] = convert_arch(doc[k], ctx)
    if "problem" in doc:
        doc["problem"] = convert_problem(doc["problem"])
    if "mapper" in doc:
        doc["mapper"] = convert_mapper(doc["mapper"])

    # data-space names (for bypassing dummy levels)
    ds_names = []
    try:
        ds_names = [ds["name"] for ds in doc["problem"]["shape"]["data-spaces"]]
    except (KeyError, TypeError):
        pass

    if "mapping" in doc:
        m = doc["mapping"]
        if isinstance(m, dict) and "mapping" not in m:
            m = m.get("targets", m.get("constraints", m))
        m = convert_directive_list(m if isinstance(m, list) else [], ctx)
        for dn in ctx["dummies"]:
            if not any(d.get("target") == dn and d.get("type") in ("bypass", "datatype") for d in m):
                m.append({"target": dn, "type": "bypass", "keep": [], "bypass": list(ds_names)})
        doc["mapping"] = m

    for k in ("mapspace_constraints", "mapspace"):
        if k in doc:
            ms = doc[k]
            if isinstance(ms, dict):
                ms = dict(ms)
                ms.pop("version", None)
                for lk in ("targets", "constraints"):
                    if isinstance(ms.get(lk), list):
                        ms[lk] = convert_directive_list(ms[lk], ctx)
            elif isinstance(ms, list):
                ms = convert_directive_list(ms, ctx)
            doc[k] = ms

    if not no_arch_constraints and (ctx["arch_constraints"] or ctx["dummies"]):
        ac = convert_directive_list(ctx["arch_constraints"], ctx)
        # Dummy levels hold nothing.
        for dn in ctx["dummies"]:
            if not any(d.get("target") == dn and d.get("type") == "bypass" for d in ac):
                ac.append({"target": dn, "type": "bypass", "keep": [], "bypass": list(ds_names)})
        if "arch_constraints" not in doc and "architecture_constraints" not in doc:
            doc["arch_constraints"] = {"targets": ac}

    # drop front-end-only keys
    for k in ("variables", "components", "globals"):
        doc.pop(k, None)

    with open(out_path, "w") as fh:
        yaml.dump(doc, fh, Dumper=Dumper, default_flow_style=False, sort_keys=False)


if __name__ == "__main__":
    main()
