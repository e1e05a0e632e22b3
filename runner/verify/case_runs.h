// One case's runs (every seed, each `repeat` times) and how they become the
// case's record: the seeds, judging a run's outputs, the stress runs'
// bit-for-bit check, and the combination of the runs. The steps of
// OperatorRun's cases (operator_run.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/executor/executor_client.h"
#include "runner/executor/protocol.h"
#include "runner/results/operator_outcome.h"
#include "runner/verify/operator_run.h"

namespace opverify {

// Judges each golden, actual pair of `call`'s tensors into `outcome`: its
// verdicts (outputs), the actuals' sha256, the first failure as its error,
// the warnings (a degenerate reference too), judge_ms and passed.
void JudgeOutputs(const OperatorSpec& spec, bool non_compute, const CallResult& call,
                  const executor_protocol::RunCaseReply& reply, CaseOutcome* outcome);

// The seeds a case runs with: the extra ones first, the base seed last (so a
// passing case's record is the base seed's run).
std::vector<std::uint64_t> CaseSeeds(const OperatorSpec& spec);

// Makes a run the case's record; timings add up over runs, warnings gather.
void TakeRun(CaseOutcome&& run, bool first, CaseOutcome* c);

// "seed S, run R of N: " naming one of a case's runs in its messages when
// there are several; empty when the case runs once.
std::string RunName(std::size_t seeds, int repeat, std::uint64_t seed, int of_seed);

// What a case's reply tells besides its outputs, into one run's outcome.
void TakeReply(const executor_protocol::RunCaseReply& r, CaseOutcome* trial);

// Stress runs: a passing run's outputs must come back bit for bit as the
// seed's first run's; else the run fails Nondeterministic.
void CheckSameBits(const std::vector<std::string>& first_sha, const std::string& which,
                   CaseOutcome* trial);

}  // namespace opverify
