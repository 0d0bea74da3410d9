// The Batch lists' $select.
#include <gtest/gtest.h>

#include "emulator/batch/odata_query.h"

namespace bai::batch {
namespace {

using nlohmann::json;

const json kTask = json::parse(R"({"id": "task-7", "state": "completed", "executionInfo": {"exitCode": 3}})");

TEST(ODataSelect, KeepsTheNamedTopLevelProperties) {
    EXPECT_EQ(select_fields(kTask, parse_select("id, state,nothing")), json::parse(R"({"id": "task-7", "state": "completed"})"));
    for (const char* bad : {"", "id,", ",id", "id,,state", "executionInfo/exitCode", "id state"}) {
        EXPECT_THROW(parse_select(bad), std::invalid_argument) << bad;
    }
}

}  // namespace
}  // namespace bai::batch
