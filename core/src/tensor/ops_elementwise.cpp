// Elementwise unary and binary ops with their gradients.
#include "autograd/node.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"
#include "tensor/op_helpers.h"

namespace switchyard {

namespace {

using Grads = std::vector<Tensor>;

// Unary ops whose backward is an op of the op set on (grad_out, saved).
Tensor unary_with_backward_op(sy_op op, sy_op backward_op, const char* name, const Tensor& x,
                              bool save_output) {
  require_float(x, name);
  Tensor out = run_unary(op, x);
  const Tensor saved = save_output ? out.detach() : x.detach();
  record_op(out, name, {x}, [backward_op, saved](const Tensor& grad, const Node&) {
    Tensor grad_in = empty_like_shape(saved, saved.shape());
    run_op(backward_op, {grad, saved}, {grad_in});
    return Grads{grad_in};
  });
  return out;
}

}  // namespace

Tensor relu(const Tensor& x) {
  return unary_with_backward_op(SY_OP_RELU, SY_OP_RELU_BACKWARD, "relu", x, false);
}
Tensor gelu(const Tensor& x) {
  return unary_with_backward_op(SY_OP_GELU, SY_OP_GELU_BACKWARD, "gelu", x, false);
}
Tensor sigmoid(const Tensor& x) {
  return unary_with_backward_op(SY_OP_SIGMOID, SY_OP_SIGMOID_BACKWARD, "sigmoid", x, true);
}
Tensor tanh(const Tensor& x) {
  return unary_with_backward_op(SY_OP_TANH, SY_OP_TANH_BACKWARD, "tanh", x, true);
}

Tensor exp(const Tensor& x) {
  require_float(x, "exp");
  Tensor out = run_unary(SY_OP_EXP, x);
  record_op(out, "exp", {x},
            [y = out.detach()](const Tensor& grad, const Node&) { return Grads{mul(grad, y)}; });
  return out;
}

Tensor log(const Tensor& x) {
  require_float(x, "log");
  Tensor out = run_unary(SY_OP_LOG, x);
  record_op(out, "log", {x},
            [x](const Tensor& grad, const Node&) { return Grads{div(grad, x.detach())}; });
  return out;
}

Tensor sqrt(const Tensor& x) {
  require_float(x, "sqrt");
  Tensor out = run_unary(SY_OP_SQRT, x);
  record_op(out, "sqrt", {x}, [y = out.detach()](const Tensor& grad, const Node&) {
    return Grads{div(mul(grad, 0.5), y)};
  });
  return out;
}

Tensor neg(const Tensor& x) {
  require_float(x, "neg");
  Tensor out = run_unary(SY_OP_NEG, x);
  record_op(out, "neg", {x}, [](const Tensor& grad, const Node&) { return Grads{neg(grad)}; });
  return out;
}

Tensor abs(const Tensor& x) {
  require_float(x, "abs");
  Tensor out = run_unary(SY_OP_ABS, x);
  record_op(out, "abs", {x},
            [x](const Tensor& grad, const Node&) { return Grads{mul(grad, sign(x.detach()))}; });
  return out;
}

Tensor sign(const Tensor& x) {
  require_float(x, "sign");
  return run_unary(SY_OP_SIGN, x);
}

// ---- tensor-tensor ------------------------------------------------------------------------------

Tensor add(const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(SY_OP_ADD, a, b);
  record_op(out, "add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g, const Node& n) {
    return Grads{n.needs_grad(0) ? sum_to_shape(g, sa) : Tensor(),
                 n.needs_grad(1) ? sum_to_shape(g, sb) : Tensor()};
  });
  return out;
}

Tensor sub(const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(SY_OP_SUB, a, b);
  record_op(out, "sub", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g, const Node& n) {
    return Grads{n.needs_grad(0) ? sum_to_shape(g, sa) : Tensor(),
                 n.needs_grad(1) ? sum_to_shape(neg(g), sb) : Tensor()};
  });
  return out;
}

Tensor mul(const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(SY_OP_MUL, a, b);
  record_op(out, "mul", {a, b},
            [a_data = a.detach(), b_data = b.detach()](const Tensor& g, const Node& n) {
              return Grads{
                  n.needs_grad(0) ? sum_to_shape(mul(g, b_data), a_data.shape()) : Tensor(),
                  n.needs_grad(1) ? sum_to_shape(mul(g, a_data), b_data.shape()) : Tensor()};
            });
  return out;
}

Tensor div(const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(SY_OP_DIV, a, b);
  record_op(
      out, "div", {a, b},
      [a_data = a.detach(), b_data = b.detach(), y = out.detach()](const Tensor& g, const Node& n) {
        Tensor ga, gb;
        if (n.needs_grad(0)) ga = sum_to_shape(div(g, b_data), a_data.shape());
        if (n.needs_grad(1)) gb = sum_to_shape(neg(div(mul(g, y), b_data)), b_data.shape());
        return Grads{ga, gb};
      });
  return out;
}

namespace {

// max/min: the gradient goes to the input that was chosen; `mask` is 1 where that was a.
Tensor select_binary(sy_op op, const char* name, const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(op, a, b);
  record_op(out, name, {a, b},
            [op, a_data = a.detach(), b_data = b.detach()](const Tensor& g, const Node& n) {
              const Tensor mask =
                  op == SY_OP_MAX ? greater(a_data, b_data) : greater(b_data, a_data);
              const Tensor ga_full = mul(g, mask);
              Tensor ga, gb;
              if (n.needs_grad(0)) ga = sum_to_shape(ga_full, a_data.shape());
              if (n.needs_grad(1)) gb = sum_to_shape(sub(g, ga_full), b_data.shape());
              return Grads{ga, gb};
            });
  return out;
}

}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  return select_binary(SY_OP_MAX, "maximum", a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return select_binary(SY_OP_MIN, "minimum", a, b);
}

Tensor pow(const Tensor& a_in, const Tensor& b_in) {
  const auto [a, b] = autocast_promote(a_in, b_in);
  Tensor out = run_binary(SY_OP_POW, a, b);
  record_op(
      out, "pow", {a, b},
      [a_data = a.detach(), b_data = b.detach(), y = out.detach()](const Tensor& g, const Node& n) {
        Tensor ga, gb;
        if (n.needs_grad(0))
          ga = sum_to_shape(mul(mul(g, b_data), pow(a_data, sub(b_data, 1.0))), a_data.shape());
        if (n.needs_grad(1)) gb = sum_to_shape(mul(mul(g, y), log(a_data)), b_data.shape());
        return Grads{ga, gb};
      });
  return out;
}

Tensor greater(const Tensor& a, const Tensor& b) {
  return run_binary(SY_OP_CMP_GT, a, b);
}
Tensor greater(const Tensor& a, double b) {
  return run_binary_scalar(SY_OP_CMP_GT, a, b);
}
Tensor equal(const Tensor& a, const Tensor& b) {
  return run_binary(SY_OP_CMP_EQ, a, b);
}

// ---- tensor-scalar ------------------------------------------------------------------------------

Tensor add(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_ADD, a, b);
  record_op(out, "add_scalar", {a}, [](const Tensor& g, const Node&) { return Grads{g}; });
  return out;
}

Tensor sub(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_SUB, a, b);
  record_op(out, "sub_scalar", {a}, [](const Tensor& g, const Node&) { return Grads{g}; });
  return out;
}

Tensor mul(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_MUL, a, b);
  record_op(out, "mul_scalar", {a}, [b](const Tensor& g, const Node&) { return Grads{mul(g, b)}; });
  return out;
}

Tensor div(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_DIV, a, b);
  record_op(out, "div_scalar", {a}, [b](const Tensor& g, const Node&) { return Grads{div(g, b)}; });
  return out;
}

Tensor maximum(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_MAX, a, b);
  record_op(out, "maximum_scalar", {a}, [a_data = a.detach(), b](const Tensor& g, const Node&) {
    return Grads{mul(g, greater(a_data, b))};
  });
  return out;
}

Tensor minimum(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_MIN, a, b);
  record_op(out, "minimum_scalar", {a}, [a_data = a.detach(), b](const Tensor& g, const Node&) {
    // 1 where a < b: 1 - (a > b) also passes the gradient at a tie, as the forward keeps a.
    return Grads{sub(g, mul(g, greater(a_data, b)))};
  });
  return out;
}

Tensor pow(const Tensor& a, double b) {
  Tensor out = run_binary_scalar(SY_OP_POW, a, b);
  record_op(out, "pow_scalar", {a}, [a_data = a.detach(), b](const Tensor& g, const Node&) {
    return Grads{mul(g, mul(pow(a_data, b - 1.0), b))};
  });
  return out;
}

// ---- operators ----------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, b);
}
Tensor operator+(double a, const Tensor& b) {
  return add(b, a);
}
Tensor operator-(double a, const Tensor& b) {
  return add(neg(b), a);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(b, a);
}
Tensor operator-(const Tensor& x) {
  return neg(x);
}

}  // namespace switchyard
