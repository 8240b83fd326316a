"""`named_scope` names in printed jaxprs: `pretty_print(name_stack=True)`
annotates each equation with the scopes it was staged in (relative to its
own jaxpr), every annotation aligned to one column. Expected texts recorded
from JAX 0.10.2 (`jax.make_jaxpr(f)(x).pretty_print(name_stack=True)`);
where our printer differs from JAX's apart from the names (`pjit` for
`jit`), only the annotated lines are compared."""
import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def nested(x):
    with jax.named_scope("outer"):
        y = jnp.sin(x)
        with jax.named_scope("inner"):
            z = y * 2
    return z + 1


NESTED = """{ lambda ; a:f32[]. let
    b:f32[] = sin a           # [outer]
    c:f32[] = mul b 2.0:f32[] # [outer/inner]
    d:f32[] = add c 1.0:f32[] # []
  in (d,) }"""


def test_nested_scopes_as_jax():
    closed = jax.make_jaxpr(nested)(1.0)
    assert closed.pretty_print(name_stack=True) == NESTED
    assert closed.jaxpr.pretty_print(name_stack=True) == NESTED
    # without name_stack (and str), no annotations, as JAX
    plain = "\n".join(line.split(" #")[0].rstrip() for line in NESTED.split("\n"))
    assert str(closed) == plain and closed.pretty_print() == plain


def test_equation_name_stacks():
    eqns = jax.make_jaxpr(nested)(1.0).jaxpr.eqns
    assert [e.name_stack for e in eqns] == ["outer", "outer/inner", ""]
    # the source line stays the user's, without the names
    assert all(e.source_info is None or "\x1f" not in e.source_info for e in eqns)
    assert all("test_named_scope_printing.py" in e.source_info for e in eqns)


def test_nested_jaxprs_restart_the_stack():
    @jax.jit
    def inner(x):
        with jax.named_scope("in"):
            return lax.convert_element_type(x, jnp.int32).astype(jnp.float32)

    def f(x):
        with jax.named_scope("a"):
            y = jnp.sin(x)
        z = inner(y)
        with jax.named_scope("b"):
            return jnp.cos(z)

    text = jax.make_jaxpr(f)(1.0).pretty_print(name_stack=True)
    # recorded from JAX 0.10.2 (its equation reads `jit[` where ours reads `pjit[`)
    lines = text.split("\n")
    assert lines[1] == "    b:f32[] = sin a                                                           # [a]"
    assert lines[2].startswith("    c:f32[] = pjit[") and lines[2].endswith(" # []")
    assert len(lines[2]) == len(lines[1]) - 1  # one column
    assert lines[5].endswith("= convert_element_type[new_dtype=int32 weak_type=False] d   # [in]")
    assert lines[6].endswith("= convert_element_type[new_dtype=float32 weak_type=False] e # [in]")
    assert lines[9] == "    g:f32[] = cos c                                                           # [b]"


def test_scope_around_a_jit_call_names_the_call():
    def h(x):
        with jax.named_scope("a"):
            with jax.named_scope("b"):
                return jax.jit(lambda y: jnp.sin(y))(x)

    lines = jax.make_jaxpr(h)(1.0).pretty_print(name_stack=True).split("\n")
    # JAX 0.10.2: "    b:f32[] = jit[                                            # [a/b]"
    assert lines[1].startswith("    b:f32[] = pjit[") and lines[1].endswith(" # [a/b]")
    assert lines[3] == "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) } # []"


def test_one_line_jaxpr_and_named_call():
    closed = jax.make_jaxpr(jax.named_call(jnp.sin, name="foo"))(1.0)
    assert closed.pretty_print(name_stack=True) == "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) } # [foo]"
    assert jax.make_jaxpr(lambda x: x)(1.0).pretty_print(name_stack=True) == "{ lambda ; a:f32[]. let  in (a,) }"


def test_several_equations_on_one_line_stack_their_annotations():
    def f(x):
        with jax.named_scope("a"):
            y = jnp.sin(x)
        return y + 1.0

    lines = jax.make_jaxpr(f)(1.0).pretty_print(name_stack=True).split("\n")
    assert len(lines) == 2  # JAX 0.10.2 puts the second annotation on a line of its own
    assert lines[0].endswith(" # [a]") and lines[1] == " " * (len(lines[0]) - 6) + " # []"


def test_cond_branches_and_a_scope_outside_the_trace():
    def c(x):
        return lax.cond(x > 0, lambda x: jnp.sin(x), lambda x: jnp.cos(x), x)

    with jax.named_scope("top"):  # entered before make_jaxpr: not part of its jaxpr
        text = jax.make_jaxpr(c)(1.0).pretty_print(name_stack=True)
    # recorded from JAX 0.10.2
    assert text == """{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]                                         # []
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b # []
    d:f32[] = cond[                                                   # []
      branches=(
        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }             # []
        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }             # []
      )
    ] c a
  in (d,) }"""


def test_scope_around_a_scan_names_the_scan_only():
    def g(x):
        with jax.named_scope("loop"):
            return lax.scan(lambda c, y: (c + jnp.cos(y), y), 0.0, x)

    lines = jax.make_jaxpr(g)(jnp.ones(2)).pretty_print(name_stack=True).split("\n")
    assert lines[1].endswith("= scan[ # [loop]")
    body = [line for line in lines if "cos" in line or "add" in line]
    assert body and all(line.endswith("# []") for line in body)


def test_lowered_text_and_jit_still_work_under_scopes():
    with jax.named_scope("s"):
        lowered = jax.jit(nested).lower(1.0)
        assert float(jax.jit(nested)(1.0)) == float(jnp.sin(1.0) * 2 + 1)
    text = lowered.as_text()
    assert "sin" in text and "\x1f" not in text
    assert jax.jit(nested).lower(1.0).compile()(1.0) == float(jnp.sin(1.0) * 2 + 1)


def test_transforms_wrap_the_names_as_jax():
    # recorded from JAX 0.10.2 (which names the unused primal output `_`)
    grad_lines = jax.make_jaxpr(jax.grad(nested))(1.0).pretty_print(name_stack=True).split("\n")
    assert [line.split(" # ")[1] for line in grad_lines[1:-1]] == [
        "[jvp(outer)]", "[jvp(outer)]", "[jvp(outer)/inner]", "[jvp()]",
        "[transpose(jvp(outer))/inner]", "[transpose(jvp(outer))]"]
    assert grad_lines[1] == "    b:f32[] = sin a                   # [jvp(outer)]"
    assert jax.make_jaxpr(jax.vmap(nested))(jnp.ones(2)).pretty_print(name_stack=True) == """\
{ lambda ; a:f32[2]. let
    b:f32[2] = sin a           # [vmap(outer)]
    c:f32[2] = mul b 2.0:f32[] # [vmap(outer)/inner]
    d:f32[2] = add c 1.0:f32[] # [vmap()]
  in (d,) }"""
