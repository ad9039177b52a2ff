// Scalar functions that GLSL lacks or leaves undefined where docs/ops.md defines them (erf, C pow,
// NaN-propagating max/min, IEEE division by zero).

bool sign_bit(float x) { return (floatBitsToUint(x) >> 31) != 0u; }

// erfc with fractional error below 1.2e-7 everywhere (Numerical Recipes' erfcc, a Chebyshev fit),
// so that 0.5 * x * erfc(-x / sqrt 2) stays accurate for large negative x too.
float erfc_approx(float z) {
  const float a = abs(z);
  const float t = 1.0 / (1.0 + 0.5 * a);
  const float poly =
      -1.26551223 +
      t * (1.00002368 +
           t * (0.37409196 +
                t * (0.09678418 +
                     t * (-0.18628806 +
                          t * (0.27886807 +
                               t * (-1.13520398 +
                                    t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const float result = t * exp(-a * a + poly);
  return z >= 0.0 ? result : 2.0 - result;
}

// Phi(x) = 0.5 * (1 + erf(x / sqrt 2)).
float normal_cdf(float x) { return 0.5 * erfc_approx(-x * 0.70710678118654752); }

float max_nan(float a, float b) { return (isnan(a) || isnan(b)) ? kNaN : max(a, b); }
float min_nan(float a, float b) { return (isnan(a) || isnan(b)) ? kNaN : min(a, b); }

float div_ieee(float a, float b) {
  if (b == 0.0) {
    if (a == 0.0 || isnan(a)) return kNaN;
    return (sign_bit(a) != sign_bit(b)) ? -kInf : kInf;
  }
  return a / b;
}

bool is_odd_integer(float b) { return floor(b) == b && abs(mod(b, 2.0)) == 1.0; }

// |a|^n for an integer n >= 0 by repeated squaring (a few ulp, like powf for small n).
float pow_integer(float a, uint n) {
  float result = 1.0;
  float base = a;
  while (n != 0u) {
    if ((n & 1u) != 0u) result *= base;
    base *= base;
    n >>= 1;
  }
  return result;
}

// C powf semantics, including the special cases of C99 F.9.4.4.
float pow_c(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;
  if (isnan(a) || isnan(b)) return kNaN;
  const float m = abs(a);
  if (isinf(b)) {
    if (m == 1.0) return 1.0;
    return ((m > 1.0) == (b > 0.0)) ? kInf : 0.0;
  }
  const bool odd = is_odd_integer(b);
  if (a == 0.0 || isinf(a)) {
    const bool big = (a == 0.0) == (b < 0.0);
    const float r = big ? kInf : 0.0;
    return (odd && sign_bit(a)) ? -r : r;
  }
  if (a < 0.0 && floor(b) != b) return kNaN;
  float r;
  if (floor(b) == b && abs(b) <= 64.0) {
    r = pow_integer(m, uint(abs(b)));
    if (b < 0.0) r = 1.0 / r;
  } else {
    r = exp2(b * log2(m));
  }
  return (a < 0.0 && odd) ? -r : r;
}

// tanh that stays finite for large |x| whatever the driver's expansion.
float tanh_safe(float x) { return isnan(x) ? x : tanh(clamp(x, -15.0, 15.0)); }
