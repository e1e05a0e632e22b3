// The job manifest schema, schemas/jobs.schema.json, compiled into the
// program (runner/CMakeLists.txt generates jobs_schema.cc from it), so a
// manifest is checked against the schema the runner was built with, wherever
// it runs.
#pragma once

#include <string_view>

namespace opverify {

std::string_view JobsSchemaText();

}  // namespace opverify
