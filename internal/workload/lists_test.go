package workload

import (
	"slices"
	"strings"
	"testing"
)

// rbac's list queries agree with its checks: an input's resource, when the data holds it, is in
// its list query's expected set exactly when the input expects allow; inputs asking the same
// user and action share a query.
func TestRBACListQueriesAgreeWithChecks(t *testing.T) {
	for _, name := range []string{"rbac", "rbac-data-1000"} {
		t.Run(name, func(t *testing.T) {
			w, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			l, err := ListQueriesOf(w, Objects)
			if err != nil {
				t.Fatal(err)
			}
			d := w.Model.(*RBACData)
			checked, listed := 0, 0
			for i, in := range w.Inputs {
				q := l.Query(i)
				m := in.Model.(RBACInput)
				if q.Subject.ID != m.User || q.Permission != "can_"+m.Action || q.ResourceType != "resource" {
					t.Fatalf("input %d %+v asks %s", i+1, m, q)
				}
				if !slices.IsSorted(q.Expected) {
					t.Fatalf("%s: expected set not sorted", q)
				}
				if _, ok := d.Resources[m.Resource.Type][m.Resource.ID]; !ok {
					continue
				}
				checked++
				in := slices.Contains(q.Expected, rbacObject(m.Resource.Type, m.Resource.ID).String())
				if in != (w.Inputs[i].Expect == ExpectAllow) {
					t.Errorf("input %d %+v: in its list %t, expects %s", i+1, m, in, w.Inputs[i].Expect)
				}
				if in {
					listed++
				}
			}
			if checked < len(w.Inputs)/2 || listed == 0 || listed == checked {
				t.Fatalf("%d inputs checked against their lists, %d in them: the test compared too little", checked, listed)
			}
			if len(l.Queries) >= len(w.Inputs) {
				t.Errorf("%d queries for %d inputs: inputs asking the same user and action must share one", len(l.Queries), len(w.Inputs))
			}
		})
	}
	w, err := Builtin("docshare-10")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ListQueriesOf(w, Subjects); err == nil || !strings.Contains(err.Error(), "docshare-10 has no list queries yet") {
		t.Errorf("docshare-10: %v, want it refused by name", err)
	}
}

// rbac's list-users queries agree with its checks: an input's user, when the directory knows
// them, is in its query's expected set exactly when the input expects allow.
func TestRBACUserListsAgreeWithChecks(t *testing.T) {
	w, err := Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ListQueriesOf(w, Subjects)
	if err != nil {
		t.Fatal(err)
	}
	d := w.Model.(*RBACData)
	checked, listed := 0, 0
	for i, in := range w.Inputs {
		q := l.Query(i)
		m := in.Model.(RBACInput)
		if q.Of != Subjects || q.Resource != rbacObject(m.Resource.Type, m.Resource.ID) || q.Permission != "can_"+m.Action || q.SubjectType != "user" {
			t.Fatalf("input %d %+v asks %s", i+1, m, q)
		}
		if _, ok := d.Users[m.User]; !ok {
			continue
		}
		checked++
		in := slices.Contains(q.Expected, "user:"+m.User)
		if in != (w.Inputs[i].Expect == ExpectAllow) {
			t.Errorf("input %d %+v: in its list %t, expects %s", i+1, m, in, w.Inputs[i].Expect)
		}
		if in {
			listed++
		}
	}
	if checked < len(w.Inputs)/2 || listed == 0 || listed == checked {
		t.Fatalf("%d inputs checked against their lists, %d in them: the test compared too little", checked, listed)
	}
}
