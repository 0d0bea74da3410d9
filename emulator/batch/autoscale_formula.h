// Batch auto-scale formulas: statements "NAME = EXPRESSION;" over the service's variables
// ($PendingTasks, $ActiveTasks, $RunningTasks, $CurrentDedicatedNodes, ... and the outputs
// $TargetDedicatedNodes, $TargetLowPriorityNodes, $NodeDeallocationOption) and the formula's own;
// numbers, vectors of numbers and strings; + - * / %, comparisons, && || !, ?:, and the service's
// functions (min, max, avg, sum, count, len, median, std, percentile, pow, sqrt, ln, lg, log,
// floor, ceil, round, abs) and sample methods (GetSample, GetSamplePercent, Count).
//
// A metric's samples are its present value and the history the pool has kept (one sample each
// sample_period, 30 s as the service's): GetSample(N) gives the N newest, GetSample(interval
// [, percent]) and GetSample(start, end [, percent]) those of the interval (an error when fewer
// than percent of its samples are there), GetSamplePercent(interval) how much of the interval
// the samples cover, Count() how many there are. A metric used directly is its present value
// (the service would refuse it).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>

namespace bai::batch {

// The metrics of a pool at `time` (seconds from any fixed origin).
struct MetricSample {
    double time = 0;
    std::map<std::string, double> values;
};

struct AutoScaleInputs {
    std::map<std::string, double> metrics;  // "$PendingTasks" -> 3, "$CurrentDedicatedNodes" -> 1, ...
    // Earlier samples, newest first, as the pool keeps them (not copied for an evaluation); none
    // when null. `now` is on the samples' clock.
    const std::deque<MetricSample>* history = nullptr;
    double now = 0;
    double sample_period = 30;
    // Checking a formula (at add): too few samples for a GetSample's percentage is no fault then.
    bool lenient_samples = false;
};

struct AutoScaleResult {
    // As the service reports a run: "$TargetDedicatedNodes=2;$TargetLowPriorityNodes=0;
    // $NodeDeallocationOption=requeue", then each of the formula's own variables (";name=value").
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
