#include "fake_storage/engine/blob_tags.h"

#include <gtest/gtest.h>

#include "tests/fake_storage/error_code.h"

namespace bai::storage {
namespace {

using testing::code_of;

TEST(BlobTags, HeaderIsUrlEncodedPairs) {
    Tags tags = parse_tags_header("tag1=val1&tag%202=a+b&empty=");
    EXPECT_EQ(tags, (Tags{{"tag1", "val1"}, {"tag 2", "a b"}, {"empty", ""}}));
    EXPECT_TRUE(parse_tags_header("").empty());
    EXPECT_EQ(code_of([] { parse_tags_header("novalue"); }), "400 InvalidTag");
    EXPECT_EQ(code_of([] { parse_tags_header("a=1&a=2"); }), "400 DuplicateTagNames");
    EXPECT_EQ(code_of([] { parse_tags_header("a=%zz"); }), "400 InvalidTag");
    EXPECT_EQ(code_of([] { parse_tags_header("a=%21"); }), "400 InvalidTag");  // '!' is not a tag character
}

TEST(BlobTags, LimitsAreTheServices) {
    const Tags ten{{"a", "v"}, {"b", "v"}, {"c", "v"}, {"d", "v"}, {"e", "v"},
                   {"f", "v"}, {"g", "v"}, {"h", "v"}, {"i", "v"}, {"j", "v"}};
    EXPECT_EQ(code_of([&] { validate_tags(ten); }), "no error");
    Tags eleven = ten;
    eleven.emplace("z", "v");
    EXPECT_EQ(code_of([&] { validate_tags(eleven); }), "400 TagsTooLarge");
    EXPECT_EQ(code_of([] { validate_tags({{std::string(128, 'k'), std::string(256, 'v')}}); }), "no error");
    EXPECT_EQ(code_of([] { validate_tags({{std::string(129, 'k'), "v"}}); }), "400 TagsTooLarge");
    EXPECT_EQ(code_of([] { validate_tags({{"k", std::string(257, 'v')}}); }), "400 TagsTooLarge");
    EXPECT_EQ(code_of([] { validate_tags({{"", "v"}}); }), "400 EmptyTagName");
    EXPECT_EQ(code_of([] { validate_tags({{"a+-./:=_ Z9", "a+-./:=_ Z9"}}); }), "no error");
    EXPECT_EQ(code_of([] { validate_tags({{"k", "v&"}}); }), "400 InvalidTag");
}

TEST(BlobTags, XmlRoundTrips) {
    Tags tags{{"a", "1"}, {"b c", "x/y"}, {"space", " "}};
    EXPECT_EQ(parse_tags_xml(tags_xml(tags)), tags);  // a value of spaces is kept
    EXPECT_EQ(parse_tags_xml("<Tags>\n  <TagSet>\n    <Tag><Key>k</Key><Value>v</Value></Tag>\n  </TagSet>\n</Tags>"),
              (Tags{{"k", "v"}}));
    EXPECT_EQ(code_of([] { parse_tags_xml("<Tags><TagSet><Tag><Key>a</Key><Value>1</Value></Tag>"
                                          "<Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tags>"); }),
              "400 DuplicateTagNames");
    EXPECT_EQ(code_of([] { parse_tags_xml("<Tags><TagSet>"); }), "400 InvalidXmlDocument");
    EXPECT_EQ(code_of([] { parse_tags_xml("<Other/>"); }), "400 InvalidXmlDocument");
    EXPECT_EQ(tags_from_json(tags_to_json(tags)), tags);
    EXPECT_EQ(tags_to_json({}), "");
}

TEST(TagExpression, FindQueriesCompareStrings) {
    Tags tags{{"tag1", "val1"}, {"tag2", "20"}, {"Key With Space", "x"}};
    auto find = [](const char* text) { return TagExpression::parse(text, TagExpression::Use::find); };
    EXPECT_TRUE(find("tag1 = 'val1'").matches(tags));
    EXPECT_TRUE(find("tag1='val1' AND tag2 > '100'").matches(tags));  // "20" > "100" as strings
    EXPECT_FALSE(find("tag1='val1' and tag2 < '100'").matches(tags));
    EXPECT_TRUE(find("tag2 >= '20' and tag2 <= '20'").matches(tags));
    EXPECT_TRUE(find("\"Key With Space\" = 'x'").matches(tags));
    EXPECT_FALSE(find("missing = ''").matches(tags));
    EXPECT_TRUE(find("@container = 'box' and tag1 = 'val1'").matches(tags, "box"));
    EXPECT_FALSE(find("@container = 'box'").matches(tags, "other"));
    EXPECT_EQ(code_of([&] { find("tag1 = 'it''s'"); }), "400 InvalidQueryParameterValue");  // ' is no tag character
    EXPECT_EQ(find("tag1 = 'val1' and tag2 > '1'").named(tags), (Tags{{"tag1", "val1"}, {"tag2", "20"}}));
}

TEST(TagExpression, FindQueriesRefuseWhatTheServiceRefuses) {
    auto code = [](const char* text) {
        return code_of([&] { TagExpression::parse(text, TagExpression::Use::find); });
    };
    EXPECT_EQ(code("a = 'x' or b = 'y'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a <> 'x'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("(a = 'x')"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a = 'x' and a = 'y'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a > 'x' and a >= 'y'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a > 'x' and a < 'y'"), "no error");  // a range
    EXPECT_EQ(code("a = 'x"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a = x"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a-b = 'x'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("@other = 'x'"), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code(""), "400 InvalidQueryParameterValue");
    EXPECT_EQ(code("a = 'x' and"), "400 InvalidQueryParameterValue");
    std::string eleven;
    for (int i = 0; i < 11; ++i) {
        if (i > 0) eleven += " and ";
        eleven += "k";
        eleven += std::to_string(i);
        eleven += " = 'v'";
    }
    EXPECT_EQ(code(eleven.c_str()), "400 InvalidQueryParameterValue");
    std::string long_key(1, '"');
    long_key.append(129, 'k');
    long_key += "\" = 'v'";
    EXPECT_EQ(code(long_key.c_str()), "400 InvalidQueryParameterValue");
    std::string long_value("k = '");
    long_value.append(257, 'v');
    long_value += "'";
    EXPECT_EQ(code(long_value.c_str()), "400 InvalidQueryParameterValue");
}

TEST(TagExpression, ConditionsAlsoTakeOrNotEqualAndGroups) {
    Tags tags{{"tag1", "val1"}, {"tag2", "val2"}};
    auto cond = [](const char* text) { return TagExpression::parse(text, TagExpression::Use::condition); };
    EXPECT_FALSE(cond("tag1 <> 'val1'").matches(tags));
    EXPECT_TRUE(cond("tag1 <> 'other'").matches(tags));
    EXPECT_TRUE(cond("tag1 = 'no' OR tag2 = 'val2'").matches(tags));
    EXPECT_TRUE(cond("(tag1 = 'no' or tag2 = 'val2') and tag1 = 'val1'").matches(tags));
    EXPECT_FALSE(cond("tag1 = 'no' or (tag2 = 'val2' and tag1 = 'no')").matches(tags));
    EXPECT_TRUE(cond("tag1 = 'val1' and tag1 = 'val1'").matches(tags));  // no uniqueness rule here
    EXPECT_EQ(code_of([] { TagExpression::parse("@container = 'c'", TagExpression::Use::condition); }),
              "400 InvalidHeaderValue");
    EXPECT_EQ(code_of([] { TagExpression::parse("(tag1 = 'a'", TagExpression::Use::condition); }),
              "400 InvalidHeaderValue");
    std::string deep(40, '(');
    deep += "a = 'b'";
    deep.append(40, ')');
    EXPECT_EQ(code_of([&] { TagExpression::parse(deep, TagExpression::Use::condition); }), "400 InvalidHeaderValue");
}

}  // namespace
}  // namespace bai::storage
