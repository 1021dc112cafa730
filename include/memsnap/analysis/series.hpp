#pragma once
// Many captures: trend over the steps of one run, and ranks of one job compared with the median
// rank. Uses judge and sites.

#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
