// Batch auto-scale formulas: statements "NAME = EXPRESSION;" over the service's variables
// ($PendingTasks, $ActiveTasks, $RunningTasks, $CurrentDedicatedNodes, ... and the outputs
// $TargetDedicatedNodes, $TargetLowPriorityNodes, $NodeDeallocationOption) and the formula's own;
// numbers, vectors of numbers and strings; + - * / %, comparisons, && || !, ?:, and the service's
// functions (min, max, avg, sum, count, len, median, std, percentile, pow, sqrt, ln, lg, log,
// floor, ceil, round, abs) and sample methods (GetSample, GetSamplePercent, Count).
//
// The emulator keeps the present value of each metric only: GetSample(N or an interval) gives it
// once, GetSamplePercent gives 100 (every sample "available"), and a metric used directly is its
// present value (the service would refuse it).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace bai::batch {

struct AutoScaleInputs {
    std::map<std::string, double> metrics;  // "$PendingTasks" -> 3, "$CurrentDedicatedNodes" -> 1, ...
};

struct AutoScaleResult {
    // Each $ variable and formula variable as the service reports it ("$TargetDedicatedNodes=2;...").
    std::string results;
    std::optional<int> target_dedicated;
    std::optional<int> target_low_priority;
    std::string deallocation;  // requeue (default), terminate, taskcompletion, retaineddata
    std::optional<std::string> error;  // the formula's fault, by position: then nothing else is set
};

AutoScaleResult evaluate_autoscale(const std::string& formula, const AutoScaleInputs& inputs);

// Every metric the service defines, at `value` (a formula is checked against these at 0).
AutoScaleInputs metrics_at(double value);

}  // namespace bai::batch
