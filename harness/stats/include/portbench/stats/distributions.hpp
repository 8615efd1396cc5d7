// SPDX-License-Identifier: Apache-2.0
// The few distribution functions the tests need, written out so that results do not depend on
// a statistics library: Student's t (for the Welch interval) and the regularized incomplete beta.
#pragma once

namespace portbench::stats {

/// Regularized incomplete beta I_x(a, b), for a, b > 0 and 0 <= x <= 1.
[[nodiscard]] double incomplete_beta(double a, double b, double x);
/// P(T <= t) for Student's t with `df` > 0 degrees of freedom (df need not be an integer).
[[nodiscard]] double student_t_cdf(double t, double df);
/// The t with P(T <= t) = p, for 0 < p < 1.
[[nodiscard]] double student_t_quantile(double p, double df);

}  // namespace portbench::stats
