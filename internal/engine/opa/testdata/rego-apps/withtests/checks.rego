# A test package in a file not named *_test.rego: test_ rules only.
package withtests.checks

import data.withtests

test_no_owner_no_access if not withtests.allow with input as {"user": "ann", "doc": "nope"}
