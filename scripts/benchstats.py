"""Statistics of the benchmarks (scripts/bench-*.sh): medians and the
distribution-free 95 % confidence interval of a median, from the order
statistics (ranks n/2 -/+ 1.96 sqrt(n)/2)."""
import math


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def median_ci(values):
    """(low, high) of the 95 % confidence interval of the median"""
    v = sorted(values)
    n = len(v)
    k = max(0, int(math.floor(n / 2 - 1.96 * math.sqrt(n) / 2)))
    return v[k], v[n - 1 - k]
