// OData $filter over JSON documents (the Batch lists' and ARM's): what documented filters select,
// both ways of comparing strings, and the refusals of what is not a filter.
#include <gtest/gtest.h>

#include "common/odata/filter.h"

namespace bai::odata {
namespace {

using nlohmann::json;

const json kTask = json::parse(R"({"id": "task-7", "state": "completed", "displayName": "it's here",
    "executionInfo": {"exitCode": 3, "retryCount": 0, "endTime": "2026-11-26T22:41:26.1569002Z"},
    "constraints": {"maxTaskRetryCount": 2}, "multiInstanceSettings": null, "done": true})");

bool selects(const char* filter) { return Filter::parse(filter, Case::sensitive).matches(kTask); }

TEST(ODataFilter, ComparesPropertiesAndPathsWithLiterals) {
    EXPECT_TRUE(selects("state eq 'completed'"));
    EXPECT_FALSE(selects("state eq 'Completed'"));  // values compare as they are
    EXPECT_TRUE(selects("state ne 'active'"));
    EXPECT_TRUE(selects("executionInfo/exitCode eq 3"));
    EXPECT_TRUE(selects("executionInfo/exitCode gt 0 and executionInfo/exitCode le 3"));
    EXPECT_FALSE(selects("executionInfo/exitCode lt 3"));
    EXPECT_TRUE(selects("0 lt executionInfo/exitCode"));  // a literal first turns the operator around
    EXPECT_TRUE(selects("constraints/maxTaskRetryCount ge 2.0"));
    EXPECT_TRUE(selects("done eq true"));
    EXPECT_TRUE(selects("displayName eq 'it''s here'"));
    EXPECT_TRUE(selects("multiInstanceSettings eq null"));
    EXPECT_TRUE(selects("missing/property eq null"));
    EXPECT_FALSE(selects("missing eq 'x'"));
    EXPECT_TRUE(selects("missing ne 'x'"));
    // Times compare as times, not as text (".15Z" is later than "Z").
    EXPECT_TRUE(selects("executionInfo/endTime gt datetime'2026-11-26T22:41:26Z'"));
    EXPECT_FALSE(selects("executionInfo/endTime lt datetime'2026-11-26T22:41:26Z'"));
}

TEST(ODataFilter, FunctionsAndLogic) {
    EXPECT_TRUE(selects("startswith(id,'task-')"));
    EXPECT_FALSE(selects("startswith(id,'job-')"));
    EXPECT_TRUE(selects("endswith(id, '-7')"));
    EXPECT_TRUE(selects("substringof('sk-', id)"));
    EXPECT_TRUE(selects("not startswith(id,'job-')"));
    EXPECT_TRUE(selects("(state eq 'active' or state eq 'completed') and executionInfo/exitCode ne 0"));
    EXPECT_FALSE(selects("state eq 'active' or state eq 'running'"));
    EXPECT_TRUE(selects("  state   eq   'completed'  "));
    EXPECT_TRUE(selects("notes eq null"));  // a property whose name starts like a keyword
    EXPECT_TRUE(selects("contains(displayName, 's her')"));
    EXPECT_TRUE(selects("state EQ 'completed' AND NOT done eq false"));  // keywords in any case
}

TEST(ODataFilter, StringsWithoutRegardToCaseWhenAsked) {
    auto holds = [](const char* filter) { return Filter::parse(filter, Case::insensitive).matches(kTask); };
    EXPECT_TRUE(holds("state eq 'COMPLETED'"));
    EXPECT_TRUE(holds("startswith(id, 'TASK')"));
    EXPECT_FALSE(selects("startswith(id, 'TASK')"));
    EXPECT_TRUE(holds("state gt 'ACTIVE'"));
}

TEST(ODataFilter, RefusesWhatIsNotAFilterSayingWhere) {
    for (const char* bad : {"", "state", "state eq", "state eq 'open", "state equals 'x'", "state eq 'a' and",
                            "(state eq 'a'", "state eq 'a')", "startswith('x', id)", "startswith(id, 3)", "1 eq 2",
                            "state eq state", "exitCode eq 1.2.3", "x eq -", "t gt datetime'yesterday'", "'a' 'b'",
                            "state eq 'a' xor state eq 'b'"}) {
        EXPECT_THROW(Filter::parse(bad, Case::sensitive), FilterError) << bad;
    }
    try {
        Filter::parse("state eq 'a' or", Case::sensitive);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("at position 16"), std::string::npos) << e.what();
    }
    // Nesting and length are bounded (the parser recurses).
    EXPECT_THROW(Filter::parse(std::string(100, '(') + "a eq 1" + std::string(100, ')'), Case::sensitive), FilterError);
    EXPECT_THROW(Filter::parse(std::string(200, 'n') + " eq " + std::string(20000, '1'), Case::sensitive), FilterError);
    EXPECT_NO_THROW(Filter::parse(std::string(30, '(') + "a eq 1" + std::string(30, ')'), Case::sensitive));
}

}  // namespace
}  // namespace bai::odata
