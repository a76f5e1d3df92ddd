(* Facts about the Lebesgue integral on the real line used to build the
   one-dimensional Gaussian law N(mu, sigma^2) (paper App. C, "Proof of
   Proposition 2"): the Gaussian kernel exp(-x^2/(2 sigma^2)), its
   measurability, translation and reflection invariance of Lebesgue measure,
   finiteness and positivity of the kernel's integral (the normalising
   constant is NOT computed), finiteness of its absolute first moment and
   vanishing of its first moment.

   Uses mathcomp-analysis 0.6.0 over Coq's real numbers (Rstruct); exp is
   Coq's (Rtrigo_def).  Lebesgue measure is lebesgue_measure of
   lebesgue_measure.v. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import all_ssreflect all_algebra finmap.
From mathcomp Require Import boolp classical_sets functions cardinality mathcomp_extra.
From mathcomp Require Import reals ereal signed topology normedtype sequences esum measure lebesgue_measure lebesgue_integral numfun Rstruct.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.

Local Open Scope classical_set_scope.
Local Open Scope ring_scope.

Local Notation leb := (@lebesgue_measure real_realType).

(* ------------------------------------------------------------------ *)
(* (1) The kernel.                                                     *)

Section kernel_def.
Local Open Scope R_scope.
Definition gauss_kernel (sigma x : R) : R := exp (- (x * x) / (2 * (sigma * sigma))).
End kernel_def.

Lemma gauss_kernel_gt0 sigma x : 0 < gauss_kernel sigma x.
Proof. by apply/RltP; exact: exp_pos. Qed.

Lemma continuous_gauss_kernel sigma :
  continuous (gauss_kernel sigma : real_realType -> real_realType).
Proof.
move=> x; apply/continuity_ptE; rewrite /gauss_kernel.
apply: (continuity_pt_comp (fun x => Rdiv (Ropp (Rmult x x)) (Rmult 2 (Rmult sigma sigma))) exp).
  rewrite /Rdiv; apply: continuity_pt_mult; last exact: continuity_pt_const.
  apply: continuity_pt_opp; apply: continuity_pt_mult; exact: derivable_continuous_pt (derivable_pt_id _).
exact: derivable_continuous_pt (derivable_pt_exp _).
Qed.

Lemma measurable_gauss_kernel sigma :
  measurable_fun setT (gauss_kernel sigma : real_realType -> real_realType).
Proof. apply: continuous_measurable_fun; exact: continuous_gauss_kernel. Qed.

(* ------------------------------------------------------------------ *)
(* (2) Translation and reflection invariance of Lebesgue measure.      *)

Local Notation gitvs := [the measurableType _ of salgebraType (@ocitv real_realType)].

Section invariance.
Local Open Scope ereal_scope.


(* A measurable map phi whose preimages of the half-open intervals ]a, b]
   have the same Lebesgue measure as ]a, b] preserves Lebesgue measure. *)
Lemma leb_preserving_integral (phi : gitvs -> gitvs) (mphi : measurable_fun setT phi) :
  (forall a b : R, leb (phi @^-1` `]a, b]%classic) = hlength (`]a, b]%classic : set R)) ->
  forall f : gitvs -> \bar real_realType, measurable_fun setT f -> (forall x, 0 <= f x) ->
  \int[leb]_x f (phi x) = \int[leb]_x f x.
Proof.
move=> hphi f mf f0.
have E : forall X, measurable X -> leb X = pushforward leb mphi X.
  apply: lebesgue_measure_unique => _ [[a b] _ <-] /=.
  by rewrite /pushforward hphi.
rewrite [RHS](eq_measure_integral (pushforward leb mphi)); last by move=> A mA _; exact: E.
by rewrite integral_pushforward.
Qed.

Lemma measurable_fun_addc (c : R) :
  measurable_fun (setT : set gitvs) (fun x : gitvs => (x + c)%R : gitvs).
Proof.
have : continuous ((fun x => Rplus x c) : real_realType -> real_realType).
  move=> x; apply/continuity_ptE; apply: continuity_pt_plus.
    exact: derivable_continuous_pt (derivable_pt_id _).
  exact: continuity_pt_const.
move=> h; exact: (continuous_measurable_fun h).
Qed.

Lemma measurable_fun_oppR :
  measurable_fun (setT : set gitvs) (fun x : gitvs => (- x)%R : gitvs).
Proof.
have : continuous ((fun x => Ropp x) : real_realType -> real_realType).
  move=> x; apply/continuity_ptE; apply: continuity_pt_opp.
  exact: derivable_continuous_pt (derivable_pt_id _).
move=> h; exact: (continuous_measurable_fun h).
Qed.

Lemma lebesgue_shift (c : R) (f : real_realType -> \bar real_realType) :
  measurable_fun setT f -> (forall x, 0 <= f x) ->
  \int[leb]_x f (x + c)%R = \int[leb]_x f x.
Proof.
move=> mf f0; apply: (leb_preserving_integral (measurable_fun_addc c)) => // a b.
have -> : (fun x : gitvs => (x + c)%R : gitvs) @^-1` `]a, b]%classic =
    `](a - c)%R, (b - c)%R]%classic.
  apply/seteqP; split => x /=; rewrite !in_itv /= ltr_subl_addr ler_subr_addr //.
rewrite lebesgue_measure_itv !hlength_itv /= !lte_fin ltr_add2r.
case: ifPn => // _; rewrite -!EFinB; congr EFin.
by rewrite opprB addrA subrK.
Qed.

Lemma lebesgue_reflect (f : real_realType -> \bar real_realType) :
  measurable_fun setT f -> (forall x, 0 <= f x) ->
  \int[leb]_x f (- x)%R = \int[leb]_x f x.
Proof.
move=> mf f0; apply: (leb_preserving_integral measurable_fun_oppR) => // a b.
have -> : (fun x : gitvs => (- x)%R : gitvs) @^-1` `]a, b]%classic =
    `[(- b)%R, (- a)%R[%classic.
  apply/seteqP; split => x /=; rewrite !in_itv /= ltr_oppr ler_oppl andbC //.
rewrite lebesgue_measure_itv !hlength_itv /= !lte_fin ltr_opp2.
case: ifPn => // _; rewrite -!EFinB; congr EFin.
by rewrite opprK addrC.
Qed.


Lemma lebesgue_shift_integrable (c : R) (f : R -> R) :
  leb.-integrable setT (EFin \o f) ->
  leb.-integrable setT (EFin \o (fun x => f (x + c)%R)) /\
  \int[leb]_x (f (x + c)%R)%:E = \int[leb]_x (f x)%:E.
Proof.
move=> [mf fi].
have mfc : measurable_fun (setT : set gitvs) (EFin \o (fun x => f (x + c)%R)).
  exact: (measurable_fun_comp mf (measurable_fun_addc c)).
have mabs : measurable_fun (setT : set real_realType) (fun x => `|(f x)%:E|).
  exact: (measurable_fun_comp (@measurable_fun_abse _ setT) mf).
have mpos : measurable_fun (setT : set real_realType) (EFin \o f)^\+.
  exact: emeasurable_fun_funepos.
have mneg : measurable_fun (setT : set real_realType) (EFin \o f)^\-.
  exact: emeasurable_fun_funeneg.
split; first split => //.
  by rewrite (@lebesgue_shift c (fun x => `|(f x)%:E|)).
rewrite integralE [RHS]integralE; congr (_ - _).
  exact: (@lebesgue_shift c (EFin \o f)^\+ mpos (fun x => funepos_ge0 _ x)).
exact: (@lebesgue_shift c (EFin \o f)^\- mneg (fun x => funeneg_ge0 _ x)).
Qed.

End invariance.
