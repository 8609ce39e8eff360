import json, re, subprocess, sys
import os
REPO = os.environ.get("GITLEAKS_REPO", ".")  # a clone of gitleaks/gitleaks
COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
def git(*a): return subprocess.run(["git", "-C", REPO, *a], capture_output=True, text=True, check=True).stdout
files = [f for f in git("ls-tree", "--name-only", COMMIT, "cmd/generate/config/rules/").split() if f.endswith(".go") and not f.endswith("_test.go")]
def tokens(src):
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            i = src.find("\n", i); i = n if i < 0 else i; continue
        if src.startswith("/*", i):
            i = src.find("*/", i) + 2; continue
        if c.isspace(): i += 1; continue
        if c == '"':
            j = i + 1; buf = []
            while src[j] != '"':
                if src[j] == '\\': buf.append(src[j:j+2]); j += 2
                else: buf.append(src[j]); j += 1
            raw = "".join(buf)
            try:
                val = json.loads('"' + raw.replace("\\x60", "`") + '"')
            except Exception:
                val = None
            yield ("str", val); i = j + 1; continue
        if c == '`':
            j = src.index('`', i + 1); yield ("str", src[i+1:j]); i = j + 1; continue
        m = re.match(r"[A-Za-z_][A-Za-z0-9_.]*", src[i:])
        if m: yield ("id", m.group()); i += len(m.group()); continue
        if src.startswith(":=", i): yield ("op", ":="); i += 2; continue
        yield ("op", c); i += 1
out = {}
for f in files:
    src = git("show", f"{COMMIT}:{f}")
    for func in re.split(r"\nfunc ", src)[1:]:
        m = re.search(r'RuleID:\s*"([^"]+)"', func)
        if not m: continue
        rid = m.group(1)
        toks = list(tokens(func))
        section = None; samples = {"tps": [], "fps": []}
        for k, (kind, val) in enumerate(toks):
            if kind == "id" and val in ("tps", "fps") : section = val; continue
            if kind == "id" and val == "return": section = None; continue
            if section and kind == "str" and val is not None:
                prev = toks[k-1] if k else ("op", "")
                nxt = toks[k+1] if k + 1 < len(toks) else ("op", "")
                if prev[1] in ("{", ",") and nxt[1] in (",", "}", ")") and prev[1] != "+" and nxt[1] != "+":
                    samples[section].append(val)
        if samples["tps"] or samples["fps"]:
            out[rid] = {"file": f, **samples}
json.dump({"repo": "gitleaks/gitleaks", "commit": COMMIT, "rules": out}, sys.stdout, indent=1, ensure_ascii=False)
