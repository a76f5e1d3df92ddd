(* Facts about the Lebesgue integral on the real line used to build the
   one-dimensional Gaussian law N(mu, sigma^2) (paper App. C, "Proof of
   Proposition 2"): the Gaussian kernel exp(-x^2/(2 sigma^2)), its
   measurability, translation and reflection invariance of Lebesgue measure,
   finiteness and positivity of the kernel's integral (the normalising
   constant is NOT computed), finiteness of its absolute first moment and
   vanishing of its first moment.

   Uses mathcomp-analysis 0.6.0 over Coq's real numbers (Rstruct); exp is
   Coq's (Rtrigo_def).  Lebesgue measure is lebesgue_measure of
   lebesgue_measure.v.  Functions whose measurability is stated have domain
   real_realType (the carrier R with its measurable structure); the
   hypothesis 0 < sigma is mathcomp's order on R (use RltP for Rlt).

   Proof methods: (2) the image of Lebesgue measure under x |-> x + c (resp.
   x |-> -x) agrees with the length on the intervals ]a, b] (whose preimages
   are ]a - c, b - c], resp. [-b, -a[), so lebesgue_measure_unique identifies
   it with Lebesgue measure, and integral_pushforward transports the
   integral; integrable functions are split into positive and negative
   parts.  (3) x^2/(2 s^2) >= |x|/s - 1/2 gives kernel(x) <= e^(1/2) q^k for
   k <= |x| with q = e^(-1/s) < 1; the kernel is below the step series
   sum_k e^(1/2) q^k (1_[k,k+1) + 1_(-(k+1),-k]), whose integral is the
   geometric series sum_k 2 e^(1/2) q^k (integral_nneseries); positivity
   from kernel >= e^(-1/(2 s^2)) on [0, 1].  (4) |x| <= s exp(x^2/(4 s^2))
   gives |x| kernel_s(x) <= s kernel_(s sqrt 2)(x); the first moment is 0
   because the negative part of x kernel(x) is its positive part reflected. *)

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

(* ------------------------------------------------------------------ *)
(* (3) The kernel's integral is finite and positive.                   *)

Section real_facts.
Local Open Scope R_scope.

Lemma Rexp_le_mono (x y : R) : x <= y -> exp x <= exp y.
Proof. by case=> [h|->]; [left; exact: exp_increasing|right]. Qed.

Lemma gauss_kernel_le_abs s x : 0 < s ->
  gauss_kernel s x <= exp (/2) * exp (- (Rabs x / s)).
Proof.
move=> s0; rewrite /gauss_kernel -exp_plus; apply: Rexp_le_mono.
have hx : x * x = Rabs x * Rabs x := Rsqr_abs x.
rewrite hx.
have -> : - (Rabs x * Rabs x) / (2 * (s * s)) = - ((Rabs x / s) * (Rabs x / s)) / 2.
  by field; lra.
set t := Rabs x / s.
have := Rle_0_sqr (t - 1); rewrite /Rsqr; nra.
Qed.

Lemma Rexp_pow_INR (a : R) (k : nat) : exp a ^ k = exp (INR k * a).
Proof.
elim: k => [|k IH]; first by rewrite /= Rmult_0_l exp_0.
rewrite S_INR /= IH -exp_plus; congr exp; ring.
Qed.

Lemma gauss_kernel_le_step s x (k : nat) : 0 < s -> INR k <= Rabs x ->
  gauss_kernel s x <= exp (/2) * exp (- / s) ^ k.
Proof.
move=> s0 kx; apply: (Rle_trans _ _ _ (gauss_kernel_le_abs x s0)).
apply: Rmult_le_compat_l; first by left; exact: exp_pos.
rewrite Rexp_pow_INR; apply: Rexp_le_mono.
have : 0 < / s by apply: Rinv_0_lt_compat.
rewrite /Rdiv; nra.
Qed.

Lemma exp_neg_lt1 s : 0 < s -> exp (- / s) < 1.
Proof.
move=> s0; rewrite -exp_0; apply: exp_increasing.
have : 0 < / s by apply: Rinv_0_lt_compat.
lra.
Qed.

Lemma gauss_kernel_ge_unit s x : 0 < s -> 0 <= x <= 1 ->
  exp (- / (2 * (s * s))) <= gauss_kernel s x.
Proof.
move=> s0 x01; rewrite /gauss_kernel; apply: Rexp_le_mono.
have ss : 0 < 2 * (s * s) by nra.
have i0 : 0 < / (2 * (s * s)) by apply: Rinv_0_lt_compat.
have hxx : x * x <= 1 by nra.
have := Rmult_le_compat_r _ _ _ (Rlt_le _ _ i0) hxx.
rewrite /Rdiv; lra.
Qed.

(* |x| <= s (1 + x^2/(4 s^2)) <= s exp(x^2/(4 s^2)) *)
Lemma abs_gauss_kernel_le s x : 0 < s ->
  Rabs x * gauss_kernel s x <= s * gauss_kernel (s * sqrt 2) x.
Proof.
move=> s0.
have r2 : sqrt 2 * sqrt 2 = 2 by apply: sqrt_sqrt; lra.
set a := x * x / (4 * (s * s)).
have e : - (x * x) / (2 * (s * s)) =
         - a + - (x * x) / (2 * ((s * sqrt 2) * (s * sqrt 2))).
  have -> : (s * sqrt 2) * (s * sqrt 2) = (s * s) * (sqrt 2 * sqrt 2) by ring.
  by rewrite r2 /a; field; lra.
rewrite /gauss_kernel e exp_plus -Rmult_assoc.
apply: Rmult_le_compat_r; first by left; exact: exp_pos.
have H : Rabs x <= s * exp a.
  apply: (Rle_trans _ (s * (1 + a))); last first.
    by apply: Rmult_le_compat_l; [lra|exact: exp_ineq1_le].
  have hx : x * x = Rabs x * Rabs x := Rsqr_abs x.
  rewrite /a hx.
  have -> : s * (1 + Rabs x * Rabs x / (4 * (s * s))) = s + (Rabs x * Rabs x) / (4 * s).
    by field; lra.
  have := Rle_0_sqr (Rabs x - 2 * s); rewrite /Rsqr => h.
  have h4 : 0 < 4 * s by lra.
  apply: (Rmult_le_reg_r (4 * s)) => //.
  have -> : (s + Rabs x * Rabs x / (4 * s)) * (4 * s) = 4 * s * s + Rabs x * Rabs x.
    by field; lra.
  nra.
have := Rmult_le_compat_r (exp (- a)) _ _ (Rlt_le _ _ (exp_pos _)) H.
by rewrite Rmult_assoc -exp_plus Rplus_opp_r exp_0 Rmult_1_r.
Qed.

Definition gauss_step_ratio s := exp (- / s).
Definition gauss_step_const := exp (/2).
Definition gauss_unit_bound s := exp (- / (2 * (s * s))).

End real_facts.

Section integrals.
Variable sigma : R.
Hypothesis s0 : 0 < sigma.

Let s0R : Rlt 0 sigma. Proof. exact/RltP. Qed.

Let q : R := gauss_step_ratio sigma.
Let c : R := gauss_step_const.
Let A (k : nat) : set real_realType := `[k%:R, k%:R + 1[%classic.
Let B (k : nat) : set real_realType := `](- (k%:R + 1)), - k%:R]%classic.
Let h (k : nat) (x : real_realType) : \bar real_realType :=
  ((c * q ^+ k) * (\1_(A k) x + \1_(B k) x))%:E.

Local Open Scope ereal_scope.

Let q0 : (0 <= q)%R. Proof. by apply/RleP; left; exact: exp_pos. Qed.
Let c0 : (0 <= c)%R. Proof. by apply/RleP; left; exact: exp_pos. Qed.
Let q1 : (q < 1)%R. Proof. by apply/RltP; exact: exp_neg_lt1. Qed.

Let indic_ge0 (D : set real_realType) x : (0 <= \1_D x :> R)%R.
Proof. by rewrite indicE; case: (x \in D). Qed.

Let h0 k x : 0 <= h k x.
Proof.
rewrite lee_fin; apply: mulr_ge0; last exact: addr_ge0.
by apply: mulr_ge0 => //; exact: exprn_ge0.
Qed.

Let mh k : measurable_fun setT (h k).
Proof.
apply/EFin_measurable_fun; apply: measurable_funrM; apply: measurable_funD;
  apply: measurable_fun_indic; exact: measurable_itv.
Qed.

Let int_h k : \int[leb]_x h k x = ((c * q ^+ k) * 2)%:E.
Proof.
rewrite /h; under eq_integral do rewrite EFinM.
rewrite ge0_integralM_EFin //; last 3 first.
- by move=> x _; rewrite lee_fin; exact: addr_ge0.
- by apply/EFin_measurable_fun; apply: measurable_funD;
    apply: measurable_fun_indic; exact: measurable_itv.
- by apply: mulr_ge0 => //; exact: exprn_ge0.
rewrite [RHS]EFinM; congr (_ * _)%E.
under eq_integral do rewrite EFinD.
rewrite ge0_integralD //; last 4 first.
- by move=> x _; rewrite lee_fin.
- by apply/EFin_measurable_fun; apply: measurable_fun_indic; exact: measurable_itv.
- by move=> x _; rewrite lee_fin.
- by apply/EFin_measurable_fun; apply: measurable_fun_indic; exact: measurable_itv.
rewrite !integral_indic ?setIT //; try exact: measurable_itv.
rewrite /A /B /= !lebesgue_measure_itv !hlength_itv /= !lte_fin.
rewrite ltr_addl ltr01 ltr_opp2 ltr_addl ltr01 -!EFinB -EFinD.
congr EFin; rewrite opprK [X in (X + _)%R]addrAC subrr add0r addKr.
by [].

Qed.

Let kernel_le_series x :
  (gauss_kernel sigma x)%:E <= \sum_(k <oo) h k x.
Proof.
pose k0 := `|floor `|x| |%N.
have k0E : (k0%:R = (floor `|x|)%:~R :> R)%R.
  by rewrite /k0 natr_absz ger0_norm // floor_ge0.
have k0x : (k0%:R <= `|x|)%R by rewrite k0E; exact: floor_le.
have xk0 : (`|x| < k0%:R + 1)%R by rewrite k0E; exact: lt_succ_floor.
have ind1 : (1 <= \1_(A k0) x + \1_(B k0) x :> R)%R.
  have [x0|x0] := leP 0%R x.
    have xA : x \in A k0.
      by rewrite /A inE /= in_itv /= -(ger0_norm x0) k0x xk0.
    by rewrite [\1_(A k0) x]indicE xA ler_addl.
  have xB : x \in B k0.
    rewrite /B inE /= in_itv /= ltr_oppl ler_oppr -(ltr0_norm x0).
    by rewrite k0x xk0.
  by rewrite [\1_(B k0) x]indicE xB ler_addr.
apply: (@le_trans _ _ (h k0 x)).
  rewrite /h lee_fin.
  have qk0 : (0 < c * q ^+ k0)%R.
    rewrite mulr_gt0 //; first by apply/RltP; exact: exp_pos.
    by rewrite exprn_gt0 //; apply/RltP; exact: exp_pos.
  apply: le_trans (ler_pemulr (ltW qk0) ind1).
  rewrite /c /q -RpowE; apply/RleP; apply: gauss_kernel_le_step => //.
  by rewrite INRE; apply/RleP.
apply: le_trans (nneseries_lim_ge k0.+1 (fun n _ => h0 n x)).
by rewrite big_nat_recr //= lee_addr // sume_ge0.
Qed.

Let series_fin : \sum_(k <oo) ((c * q ^+ k) * 2)%:E < +oo.
Proof.
have c2 : (0 <= c * 2)%R by rewrite mulr_ge0.
apply: (@le_lt_trans _ _ ((c * 2) / (1 - q))%:E); last exact: ltry.
apply: lime_le.
  by apply: is_cvg_nneseries => n _; rewrite lee_fin mulr_ge0 // mulr_ge0 // exprn_ge0.
apply: nearW => n; rewrite sumEFin lee_fin.
have qn1 : q != 1%R by rewrite lt_eqF.
have gE := congr1 (fun f => f n) (geometric_seriesE (c * 2) qn1).
rewrite /series /= in gE.
under eq_bigr do rewrite mulrAC.
rewrite gE ler_pmul2r ?invr_gt0 ?subr_gt0 //.
by rewrite ler_pimulr // ler_subl_addr ler_addl exprn_ge0.
Qed.

Lemma gauss_integral_fin : \int[leb]_x (gauss_kernel sigma x)%:E < +oo.
Proof.
apply: le_lt_trans series_fin.
have mK : measurable_fun setT (fun x : real_realType => (gauss_kernel sigma x)%:E).
  by apply/EFin_measurable_fun; exact: measurable_gauss_kernel.
have mH : measurable_fun setT (fun x => \sum_(k <oo) h k x).
  by apply: ge0_emeasurable_fun_sum.
apply: (@le_trans _ _ (\int[leb]_x (\sum_(k <oo) h k x))).
  apply: ge0_le_integral => //; first [
      by move=> x _; rewrite lee_fin; apply/ltW/gauss_kernel_gt0
    | by move=> x _; apply: nneseries_ge0
    | by move=> x _; exact: kernel_le_series
    | exact: mK | exact: mH ].
rewrite integral_nneseries //.
by rewrite (eq_eseries (fun k _ => int_h k)).
Qed.

Lemma gauss_integral_gt0 : 0 < \int[leb]_x (gauss_kernel sigma x)%:E.
Proof.
pose e := gauss_unit_bound sigma.
have e0 : (0 < e)%R by apply/RltP; exact: exp_pos.
pose I01 : set real_realType := `[0%R, 1%R]%classic.
have mI : measurable I01 by exact: measurable_itv.
apply: (@lt_le_trans _ _ (\int[leb]_x (e * \1_I01 x)%:E)).
  under eq_integral do rewrite EFinM.
  rewrite ge0_integralM_EFin //; last 3 first.
  - by move=> x _; rewrite lee_fin.
  - by apply/EFin_measurable_fun; exact: measurable_fun_indic.
  - exact: ltW.
  rewrite integral_indic // setIT /I01 /= lebesgue_measure_itv hlength_itv /= lte_fin ltr01.
  by rewrite oppr0 adde0 mule1 lte_fin.
have mK : measurable_fun setT (fun x : real_realType => (gauss_kernel sigma x)%:E).
  by apply/EFin_measurable_fun; exact: measurable_gauss_kernel.
have mE : measurable_fun setT (fun x : real_realType => (e * \1_I01 x)%:E).
  by apply/EFin_measurable_fun; apply: measurable_funrM; exact: measurable_fun_indic.
apply: ge0_le_integral => //; first [
    by move=> x _; rewrite lee_fin; apply/ltW/gauss_kernel_gt0
  | by move=> x _; rewrite lee_fin; apply: mulr_ge0 => //; exact: ltW
  | exact: mK | exact: mE | idtac ].
move=> x _; rewrite lee_fin indicE.
case: (boolP (x \in I01)) => xI; last by rewrite mulr0; apply/ltW/gauss_kernel_gt0.
rewrite mulr1; apply/RleP; apply: gauss_kernel_ge_unit => //.
move: xI; rewrite /I01 inE /= in_itv /= => /andP[/RleP x0 /RleP x1].
by split.
Qed.

End integrals.

(* ------------------------------------------------------------------ *)
(* (4) The first moment: |x| kernel is integrable, x kernel integrates to 0. *)

Section moments.
Variable sigma : R.
Hypothesis s0 : 0 < sigma.
Local Open Scope ereal_scope.

Let mK s : measurable_fun setT (fun x : real_realType => (gauss_kernel s x)%:E).
Proof. by apply/EFin_measurable_fun; exact: measurable_gauss_kernel. Qed.

Let K_ge0 s x : (0 <= gauss_kernel s x)%R.
Proof. exact/ltW/gauss_kernel_gt0. Qed.

Let mabsK : measurable_fun setT
    (fun x : real_realType => (Rabs x * gauss_kernel sigma x)%:E).
Proof.
apply/EFin_measurable_fun; apply: measurable_funM.
  exact: measurable_fun_normr.
exact: measurable_gauss_kernel.
Qed.

Lemma gauss_abs_moment_fin :
  \int[leb]_x (Rabs x * gauss_kernel sigma x)%:E < +oo.
Proof.
pose s' := Rmult sigma (sqrt 2).
have s'0 : (0 < s')%R.
  by rewrite mulr_gt0 //; apply/RltP; apply: sqrt_lt_R0; exact: Rlt_0_2.
have fin := gauss_integral_fin s'0.
have ge0 : 0 <= \int[leb]_x (gauss_kernel s' x)%:E.
  by apply: integral_ge0 => x _; rewrite lee_fin.
have mS : measurable_fun setT (fun x : real_realType => (sigma * gauss_kernel s' x)%:E).
  by apply/EFin_measurable_fun; apply: measurable_funrM; exact: measurable_gauss_kernel.
apply: (@le_lt_trans _ _ (\int[leb]_x (sigma * gauss_kernel s' x)%:E)).
  apply: ge0_le_integral => //; first [
      by move=> x _; rewrite lee_fin; apply: mulr_ge0 => //; exact: ltW
    | by move=> x _; rewrite lee_fin; apply: mulr_ge0 => //; apply/RleP; exact: Rabs_pos
    | exact: mS | exact: mabsK | idtac ].
  move=> x _; rewrite lee_fin; apply/RleP; apply: abs_gauss_kernel_le.
  exact/RltP.
under eq_integral do rewrite EFinM.
rewrite ge0_integralM_EFin //; first [
    by move=> x _; rewrite lee_fin | exact: mK | exact: ltW | idtac ].
have fN : \int[leb]_x (gauss_kernel s' x)%:E \is a fin_num by rewrite ge0_fin_numE.
rewrite -(fineK fN).
by rewrite -EFinM ltry.
Qed.

Lemma gauss_first_moment_integrable :
  leb.-integrable setT (fun x => (x * gauss_kernel sigma x)%:E).
Proof.
split.
  apply/EFin_measurable_fun; apply: measurable_funM.
    exact: measurable_fun_id.
  exact: measurable_gauss_kernel.
apply: le_lt_trans gauss_abs_moment_fin.
rewrite le_eqVlt; apply/orP; left; apply/eqP/eq_integral => x _ /=.
by rewrite normrM (gtr0_norm (gauss_kernel_gt0 _ _)).
Qed.

Lemma gauss_first_moment :
  \int[leb]_x (x * gauss_kernel sigma x)%:E = 0.
Proof.
have [mf _] := gauss_first_moment_integrable.
pose f := fun x : real_realType => (x * gauss_kernel sigma x)%:E.
have fN x : f (- x)%R = - f x.
  rewrite /f /gauss_kernel -EFinN; congr EFin.
  by rewrite mulNr; congr (- (_ * exp _))%R; rewrite Rmult_opp_opp.
have fin : \int[leb]_x f^\+ x < +oo.
  by apply: integral_funepos_lt_pinfty => //; exact: gauss_first_moment_integrable.
have ge0 : 0 <= \int[leb]_x f^\+ x by apply: integral_ge0 => x _; exact: funepos_ge0.
rewrite integralE.
have -> : \int[leb]_x f^\- x = \int[leb]_x f^\+ x.
  rewrite -(@lebesgue_reflect f^\+); last 2 first.
  - exact: emeasurable_fun_funepos.
  - by move=> x; exact: funepos_ge0.
  apply: eq_integral => x _.
  by rewrite /funepos /funeneg fN.
by rewrite subee // ge0_fin_numE.
Qed.

End moments.
