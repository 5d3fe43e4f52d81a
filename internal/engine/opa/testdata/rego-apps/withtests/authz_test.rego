# Tests beside the policy, as opa test runs them: not a decision to benchmark.
package withtests_test

import data.withtests

test_owner_allowed if withtests.allow with input as {"user": "ann", "doc": "d1"}

test_stranger_denied if not withtests.allow with input as {"user": "cy", "doc": "d1"}
