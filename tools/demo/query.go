package demo

import (
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/tools"
)

// queryMyDataViews are what query_my_data may read (migration 0003).
var queryMyDataViews = []string{"demo.my_meals", "demo.my_activities"}

// queryMyDataTool is the demo's open SQL tool (DESIGN §8): the model writes
// one SELECT over the user's meals and activities. It reads only, so it is
// allowed in voice ("how many runs did I log last week?"); it is a pro
// feature.
func (d *app) queryMyDataTool() (*tools.Tool, error) {
	return tools.NewSQLTool(d.db, config.SQLTool{
		Name: "query_my_data",
		Description: "Answers questions about the user's own logged meals and activities by running one read-only " +
			"PostgreSQL SELECT that you write. Views: my_meals(id, name, meal_type: breakfast|lunch|dinner|snack, " +
			"calories, protein_g, carbs_g, fat_g, eaten_at timestamptz) and my_activities(id, kind: " +
			"run|walk|ride|swim|strength|yoga, minutes, distance_km, calories, started_at timestamptz). Only the " +
			"user's rows are visible, so never filter by user. At most 100 rows come back: aggregate. Never show " +
			"the SQL to the user; answer in words.",
		Views:  queryMyDataViews,
		Open:   true,
		Voice:  true,
		Plans:  []string{"pro"},
		Notice: "If the answer draws a health conclusion, add briefly: " + disclaimer,
	})
}
