"""The second SNMP stack of tests/second_stack.rs: pysnmp and pysmi, pure
Python, no net-snmp code. Run with the venv that scripts/python-deps.sh
makes (target/py-venv).

  second_stack.py compile --base DIR --mibs DIR --out DIR MODULE...
      Compiles MODULE... (found in --mibs, their imports in --mibs then
      --base) with pysmi in strict mode into pysnmp MIB modules in --out,
      then loads them into pysnmp's MIB builder. Prints one JSON object;
      exit 0 only when every module compiled and loaded.

  second_stack.py walk --port N --community C --compiled DIR
                       --max-repetitions N ROOT...
      Walks each ROOT on 127.0.0.1:N over SNMPv2c by GETNEXT, then by
      GETBULK, and checks every varbind against the MIB modules in DIR (as
      compiled above). Prints one JSON object (see walk()); the comparisons
      between the walks are the Rust test's.
"""

import argparse
import asyncio
import json
import sys

# The base modules: SNMPv2-SMI defines the base types (Integer32, ...) that
# pysmi also builds in, so its strict mode rejects them as "duplicate
# symbols". They are parsed leniently (for the symbols our MIBs import from
# them); every other module strictly. pysnmp brings its own Python versions
# of them, so none is generated (pysmi's stubs).
BASE_MODULES = (
    "RFC1065-SMI",
    "RFC1155-SMI",
    "RFC1158-MIB",
    "RFC-1212",
    "RFC1213-MIB",
    "RFC-1215",
    "SNMPv2-SMI",
    "SNMPv2-TC",
    "SNMPv2-TM",
    "SNMPv2-CONF",
)


def compile_mibs(args):
    from pysmi import config
    from pysmi.codegen.pysnmp import PySnmpCodeGen
    from pysmi.compiler import MibCompiler
    from pysmi.parser.dialect import smi_v2
    from pysmi.parser.smi import parserFactory
    from pysmi.reader.localfile import FileReader
    from pysmi.searcher.stub import StubSearcher
    from pysmi.writer.pyfile import PyFileWriter

    # The SMIv2 grammar (no SMIv1 keywords, no relaxations) and strict
    # semantics: duplicate symbols and identities, malformed BITS/hex
    # strings, bad LAST-UPDATED/REVISION dates are errors, not warnings.
    compiler = MibCompiler(
        parserFactory(**smi_v2)(), PySnmpCodeGen(), PyFileWriter(args.out)
    )
    compiler.add_sources(FileReader(args.mibs), FileReader(args.base))
    compiler.add_searchers(StubSearcher(*PySnmpCodeGen.baseMibs))

    symbolgen = compiler._symbolgen
    strict_gen_code = symbolgen.gen_code

    def gen_code(ast, *a, **kw):
        config.STRICT_MODE = ast[0] not in BASE_MODULES
        try:
            return strict_gen_code(ast, *a, **kw)
        finally:
            config.STRICT_MODE = True

    symbolgen.gen_code = gen_code
    config.STRICT_MODE = True

    result = {"modules": {}, "ok": True}
    try:
        statuses = compiler.compile(*args.modules, rebuild=True, genTexts=False)
    except Exception as exc:  # pysmi raises on the first failure
        result["ok"] = False
        result["error"] = f"{type(exc).__name__}: {exc}"
        statuses = {}
    for name, status in statuses.items():
        entry = {"status": str(status)}
        if getattr(status, "error", None):
            entry["error"] = str(status.error)
        result["modules"][name] = entry
        # Our modules must be compiled; the base ones stubs ("untouched").
        wanted = ("untouched",) if name in BASE_MODULES else ("compiled",)
        if str(status) not in wanted:
            result["ok"] = False
    for name in args.modules:
        if name not in statuses:
            result["ok"] = False
            result["modules"].setdefault(name, {"status": "not processed"})

    if result["ok"]:
        # pysmi does not check that an imported symbol exists in the module
        # it names; pysnmp's builder does when it loads the module.
        try:
            mib_view(args.out, args.modules)
            result["loaded"] = True
        except Exception as exc:
            result["ok"] = False
            result["loaded"] = False
            result["error"] = f"loading into pysnmp: {type(exc).__name__}: {exc}"
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


def mib_view(compiled_dir, modules):
    from pysnmp.smi import builder, view

    mib_builder = builder.MibBuilder()
    mib_builder.add_mib_sources(builder.DirMibSource(compiled_dir))
    mib_builder.load_modules(*modules)
    return view.MibViewController(mib_builder)


# The SMI base types, each with the BER tag it has on the wire. A value's
# type is named by its tag: Gauge32 and Unsigned32 share one, as do
# INTEGER and Integer32.
def smi_types():
    from pysnmp.proto import rfc1902

    return [
        ("Integer32", rfc1902.Integer32),
        ("OCTET STRING", rfc1902.OctetString),
        ("OBJECT IDENTIFIER", rfc1902.ObjectIdentifier),
        ("IpAddress", rfc1902.IpAddress),
        ("Counter32", rfc1902.Counter32),
        ("Gauge32", rfc1902.Gauge32),
        ("TimeTicks", rfc1902.TimeTicks),
        ("Opaque", rfc1902.Opaque),
        ("Counter64", rfc1902.Counter64),
    ]


def type_name(value):
    for name, cls in smi_types():
        if value.tagSet == cls.tagSet:
            return name
    return f"{type(value).__name__} {value.tagSet!r}"


def value_json(value):
    from pysnmp.proto import rfc1902

    if isinstance(value, rfc1902.OctetString):
        raw = bytes(value)
        return raw.hex()
    if isinstance(value, rfc1902.ObjectIdentifier):
        return ".".join(str(x) for x in value)
    if isinstance(value, rfc1902.IpAddress):
        return ".".join(str(b) for b in bytes(value))
    return str(int(value))


def check_varbind(mib, oid, value):
    """What the MIB says of this varbind, and what is wrong with it."""
    from pysnmp.proto import rfc1905
    from pysnmp.smi.rfc1902 import ObjectIdentity

    problems = []
    info = {}
    if isinstance(value, (rfc1905.NoSuchObject, rfc1905.NoSuchInstance)):
        problems.append(f"{type(value).__name__} in a GETNEXT/GETBULK answer")
        return info, problems
    try:
        ident = ObjectIdentity(oid).resolve_with_mib(mib)
        module, symbol, indices = ident.get_mib_symbol()
        node = ident.get_mib_node()
    except Exception as exc:
        problems.append(f"not resolved in the MIB: {type(exc).__name__}: {exc}")
        return info, problems
    info["object"] = f"{module}::{symbol}"
    info["index"] = ".".join(i.prettyPrint() for i in indices)
    kind = type(node).__name__
    info["kind"] = kind
    if kind not in ("MibScalarInstance", "MibScalar", "MibTableColumn"):
        problems.append(f"{module}::{symbol} is a {kind}, not an OBJECT-TYPE")
        return info, problems
    access = node.getMaxAccess()
    info["access"] = access
    if access not in ("read-only", "read-write", "read-create"):
        problems.append(f"{module}::{symbol} is {access}, yet it was walked")
    suffix = tuple(oid[len(node.getName()) :])
    if kind in ("MibScalar", "MibScalarInstance") and suffix != (0,):
        problems.append(f"scalar {symbol} answered with instance {suffix}, not .0")
    if kind == "MibTableColumn":
        # The index must decode by the row's INDEX clause and encode back to
        # the same sub-identifiers (nothing left over, nothing missing).
        try:
            row_name = node.getName()[:-1]
            (row,) = mib.mibBuilder.import_symbols(
                module, mib.get_node_name(row_name)[1][-1]
            )
            decoded = row.getIndicesFromInstId(suffix)
            # pysnmp is lenient here: an index its syntax refuses comes back
            # as the raw sub-identifiers rather than as an error.
            if not all(hasattr(i, "tagSet") for i in decoded):
                raise ValueError(
                    f"pysnmp kept raw sub-identifiers {decoded!r}: a value its SYNTAX refuses"
                )
            again = row.getInstIdFromIndices(*decoded)
            if tuple(again) != suffix:
                problems.append(
                    f"index {suffix} of {symbol} decodes to {decoded!r}, which encodes to {tuple(again)}"
                )
        except Exception as exc:
            problems.append(
                f"index {suffix} of {symbol} does not decode by the row's INDEX: {type(exc).__name__}: {exc}"
            )
    syntax = node.getSyntax()
    info["mib_type"] = type_name(syntax)
    info["syntax"] = type(syntax).__name__
    if syntax.tagSet != value.tagSet:
        problems.append(
            f"{symbol}: {type_name(value)} on the wire, the MIB says {type_name(syntax)} ({type(syntax).__name__})"
        )
    else:
        # Range, SIZE and enumeration of the SYNTAX (its subtype
        # constraints): a cast that fails is a value the MIB does not allow.
        try:
            syntax.clone(value.asOctets() if hasattr(value, "asOctets") else value)
        except Exception as exc:
            problems.append(
                f"{symbol} = {value.prettyPrint()!r} is outside its SYNTAX {type(syntax).__name__}: {exc}"
            )
    return info, problems


async def walk_root(engine, auth, target, ctx, root, bulk, max_rep):
    """One walk of `root`: a list of (oid tuple, value), and errors."""
    from pysnmp.hlapi.v3arch.asyncio import (
        ObjectIdentity,
        ObjectType,
        bulk_cmd,
        next_cmd,
    )
    from pysnmp.proto import rfc1905

    out, errors = [], []
    root = tuple(root)
    current = root
    requests = 0
    while True:
        requests += 1
        if requests > 10000:
            errors.append("more than 10000 requests: the walk does not end")
            break
        vb = ObjectType(ObjectIdentity(".".join(map(str, current))))
        if bulk:
            err_ind, err_stat, err_idx, vbs = await bulk_cmd(
                engine, auth, target, ctx, 0, max_rep, vb, lookupMib=False
            )
        else:
            err_ind, err_stat, err_idx, vbs = await next_cmd(
                engine, auth, target, ctx, vb, lookupMib=False
            )
        if err_ind:
            errors.append(f"after {'.'.join(map(str, current))}: {err_ind}")
            break
        if int(err_stat):
            errors.append(
                f"after {'.'.join(map(str, current))}: error-status {err_stat.prettyPrint()} at {int(err_idx)}"
            )
            break
        if not vbs:
            errors.append(f"after {'.'.join(map(str, current))}: an empty answer")
            break
        done = False
        for name, value in vbs:
            oid = tuple(name)
            if isinstance(value, rfc1905.EndOfMibView) or oid[: len(root)] != root:
                done = True
                break
            if oid <= current:
                errors.append(
                    f"not increasing: {'.'.join(map(str, oid))} after {'.'.join(map(str, current))}"
                )
                done = True
                break
            out.append((oid, value))
            current = oid
        if done:
            break
    return out, errors, requests


async def walk(args):
    from pysnmp.hlapi.v3arch.asyncio import (
        CommunityData,
        ContextData,
        SnmpEngine,
        UdpTransportTarget,
    )

    mib = mib_view(args.compiled, ["REDIS-SERVER-MIB", "PUPPET-AGENT-MIB"])
    engine = SnmpEngine()
    auth = CommunityData(args.community, mpModel=1)  # SNMPv2c
    target = await UdpTransportTarget.create(
        ("127.0.0.1", args.port), timeout=2, retries=1
    )
    ctx = ContextData()
    result = {}
    for root_text in args.roots:
        root = tuple(int(x) for x in root_text.strip(".").split("."))
        entry = {}
        for how, bulk in (("next", False), ("bulk", True)):
            got, errors, requests = await walk_root(
                engine, auth, target, ctx, root, bulk, args.max_repetitions
            )
            rows = []
            for oid, value in got:
                info, problems = check_varbind(mib, oid, value)
                row = {
                    "oid": "." + ".".join(map(str, oid)),
                    "type": type_name(value),
                    "value": value_json(value),
                    "problems": problems,
                }
                row.update(info)
                rows.append(row)
            entry[how] = {"varbinds": rows, "errors": errors, "requests": requests}
        result[root_text] = entry
    engine.close_dispatcher()
    print(json.dumps(result, indent=1))
    return 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--base", required=True)
    c.add_argument("--mibs", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("modules", nargs="+")
    w = sub.add_parser("walk")
    w.add_argument("--port", type=int, required=True)
    w.add_argument("--community", default="public")
    w.add_argument("--compiled", required=True)
    w.add_argument("--max-repetitions", type=int, default=25)
    w.add_argument("roots", nargs="+")
    args = parser.parse_args()
    if args.command == "compile":
        return compile_mibs(args)
    return asyncio.run(walk(args))


if __name__ == "__main__":
    sys.exit(main())
