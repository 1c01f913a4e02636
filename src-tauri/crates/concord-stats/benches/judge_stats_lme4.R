# Peer timing for benches/judge_stats.rs: lme4's REML fits of score ~ 1 + (1|target) + (1|rater)
# and score ~ 1 + (1|target) on the bench's reml.csv (the same ratings Concord fits).
#   Rscript judge_stats_lme4.R DIR      # prints one JSON object
suppressPackageStartupMessages(library(lme4))
dir <- commandArgs(trailingOnly = TRUE)[1]
d <- read.csv(file.path(dir, "reml.csv"))
d$target <- factor(d$target)
d$rater <- factor(d$rater)
fit_both <- function() {
  crossed <- lmer(score ~ 1 + (1 | target) + (1 | rater), data = d, REML = TRUE)
  one_way <- lmer(score ~ 1 + (1 | target), data = d, REML = TRUE)
  list(crossed = crossed, one_way = one_way)
}
fits <- fit_both()
times <- sapply(1:3, function(i) system.time(fit_both())[["elapsed"]])
vc <- as.data.frame(VarCorr(fits$crossed))
cat(sprintf(
  '{"seconds":%.6f,"variance":{"target":%.15g,"rater":%.15g,"residual":%.15g},"lme4":"%s"}\n',
  median(times), vc$vcov[vc$grp == "target"], vc$vcov[vc$grp == "rater"],
  vc$vcov[vc$grp == "Residual"], as.character(packageVersion("lme4"))))
