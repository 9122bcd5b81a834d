// Chat messages in several languages, written for this measurement: a user's question and an
// assistant's answer each, the register a chat client sends (not word lists, not translations of
// one text). English prose comes from the repository's own documents instead (corpus.mjs).

export const CHAT_TEXTS = {
  de: [
    `Hallo! Seit dem Update auf die neue Version bricht unser nächtlicher Export nach etwa zwanzig Minuten ab. Im Log steht nur „Verbindung vom Server geschlossen", keine weitere Fehlermeldung. Tagsüber läuft derselbe Job problemlos durch. Könnte das mit dem Wartungsfenster der Datenbank zusammenhängen, oder übersehe ich etwas Offensichtliches?`,
    `Das klingt tatsächlich nach einem Zeitlimit auf der Serverseite. Viele verwaltete Datenbanken beenden nachts inaktive oder sehr lange laufende Verbindungen, besonders während automatischer Sicherungen. Prüfen Sie zuerst, ob die Abbrüche immer zur gleichen Uhrzeit passieren: Wenn ja, liegt es fast sicher am Wartungsfenster.

Zwei Dinge helfen meistens: Teilen Sie den Export in kleinere Abschnitte auf, etwa nach Datum, und schreiben Sie nach jedem Abschnitt einen Zwischenstand. Dann kann der Job nach einem Abbruch dort weitermachen, wo er aufgehört hat. Außerdem lohnt es sich, ein Keep-Alive für die Verbindung zu setzen, damit sie bei längeren Abfragen nicht als inaktiv gilt. Wenn Sie mir die Konfiguration zeigen, sehe ich mir die genauen Werte an.`,
  ],
  fr: [
    `Bonjour, je prépare un voyage de dix jours au Portugal en octobre avec mes parents, qui marchent assez lentement. Nous hésitons entre rester à Lisbonne et faire des excursions, ou bien louer une voiture pour descendre vers l'Algarve. Qu'est-ce qui vous semble le plus reposant, sachant que nous n'aimons pas changer d'hôtel tous les deux jours ?`,
    `Avec des parents qui préfèrent un rythme tranquille, je vous conseillerais de ne changer d'hébergement qu'une seule fois. Par exemple : cinq nuits à Lisbonne, d'où vous pouvez rejoindre Sintra ou Cascais en train sans conduire, puis cinq nuits dans une petite ville de l'Algarve comme Tavira, qui est plate et agréable à parcourir à pied.

En octobre, il fait encore doux et les plages sont beaucoup moins fréquentées qu'en été. Attention toutefois aux collines de Lisbonne : les trams et les ascenseurs publics évitent bien des montées fatigantes. Pour le trajet entre les deux étapes, le train est direct et confortable ; la voiture n'est vraiment utile que si vous voulez explorer l'arrière-pays.`,
  ],
  es: [
    `Hola, tengo una tabla con las ventas de cada mes de los últimos tres años y quiero calcular el crecimiento respecto al mismo mes del año anterior. Lo he intentado con fórmulas, pero cuando falta un mes los resultados salen desplazados. ¿Hay alguna forma sencilla de hacerlo sin revisar cada fila a mano?`,
    `Sí: en lugar de comparar cada fila con la que está doce filas más arriba, busca el valor por fecha. Así, si falta un mes, la fórmula simplemente no encuentra el dato y puedes mostrar la celda vacía en vez de un resultado erróneo.

Un método práctico es añadir una columna auxiliar con la fecha desplazada un año hacia atrás y usar una búsqueda exacta sobre esa fecha. Después, el crecimiento es la diferencia entre ambos valores dividida por el valor del año anterior. Si trabajas con una tabla dinámica, también puedes mostrar los valores como «diferencia porcentual» respecto al año anterior, y la herramienta se encarga de alinear los meses correctamente.`,
  ],
  ru: [
    `Здравствуйте! У нас небольшая команда, и мы никак не можем договориться, как оформлять задачи. Одни пишут длинные описания, другие ограничиваются одной строчкой, а потом через месяц никто не помнит, зачем эта задача вообще появилась. Посоветуйте, пожалуйста, простой шаблон, который люди действительно будут заполнять.`,
    `Лучше всего работает короткий шаблон из трёх частей: что нужно сделать, зачем это нужно и как понять, что задача выполнена. Первые две части можно уложить в пару предложений, а третья часть — это конкретный проверяемый результат, например «отчёт формируется за минуту вместо десяти».

Чтобы шаблон прижился, не делайте все поля обязательными с первого дня. Договоритесь, что без ответа на вопрос «зачем» задачу не берут в работу, и раз в неделю на планировании вместе просматривайте новые задачи. Через месяц-другой команда сама начнёт писать понятнее, потому что увидит, как это экономит время при обсуждении.`,
  ],
  ja: [
    `こんにちは。来月から在宅勤務が中心になるのですが、家だと集中が続かず、気がつくと夕方になっていることがよくあります。仕事部屋はなく、リビングの一角で作業する予定です。生活のリズムを崩さずに働くためのコツがあれば教えてください。`,
    `在宅勤務で集中を保つには、まず「仕事の始まり」と「終わり」をはっきりさせることが大切です。たとえば、始業前に短い散歩をする、終業時にはパソコンを閉じて机の上を片付ける、といった小さな習慣が区切りになります。

リビングで作業する場合は、仕事で使う物を一つの箱やトレーにまとめ、終わったらしまうようにすると気持ちの切り替えがしやすくなります。また、午前中に一番重い作業を入れ、午後は会議や連絡などの軽い作業に充てると、疲れてきた時間帯でも進めやすいです。無理に長時間座り続けず、一時間ごとに立ち上がることも忘れないでください。`,
  ],
  zh: [
    `你好，我们公司打算把内部的报销流程从纸质表格改成线上系统。现在的问题是，财务部门担心新系统上线后审批会变慢，而且很多老员工不太习惯用手机提交单据。请问在推广的时候有哪些需要特别注意的地方？`,
    `推广线上报销系统时，最关键的是先减少大家的顾虑，而不是一次性替换所有流程。建议先选一个部门试点一两个月，收集实际使用中遇到的问题，再逐步推广到全公司。

针对审批速度，可以在系统里设置提醒，并规定每一级审批的处理时限，这样反而比纸质流转更透明。对于不习惯用手机的员工，可以保留电脑端提交的方式，并安排几次简短的现场演示，把拍照上传发票、填写用途这些常用步骤讲清楚。另外，最好在过渡期内同时接受纸质单据，避免有人因为不会操作而无法报销。`,
  ],
  ko: [
    `안녕하세요. 이번에 처음으로 작은 카페를 열게 되었는데, 메뉴 가격을 어떻게 정해야 할지 고민입니다. 원두와 우유 가격은 계산해 봤지만, 임대료와 인건비까지 생각하면 얼마를 받아야 적당한지 감이 오지 않습니다. 기준이 될 만한 방법이 있을까요?`,
    `가격을 정할 때는 재료비만이 아니라 한 잔을 팔 때마다 함께 부담해야 하는 고정비까지 포함해서 계산하는 것이 좋습니다. 먼저 한 달 임대료, 인건비, 공과금을 더한 뒤, 하루에 예상되는 판매량으로 나누어 한 잔당 고정비를 구해 보세요.

여기에 재료비를 더하면 최소한 받아야 하는 금액이 나옵니다. 그다음 주변 카페의 가격대를 살펴보고, 위치나 분위기, 원두의 품질 같은 차별점을 고려해서 조정하면 됩니다. 처음에는 판매량을 보수적으로 잡는 편이 안전하고, 몇 달 동안 실제 판매 데이터를 모은 뒤 다시 점검하는 것을 권합니다.`,
  ],
  ar: [
    `مرحباً، أعمل على تطبيق صغير لحجز المواعيد في عيادة أسنان، وأريد أن يرسل التطبيق تذكيراً للمرضى قبل الموعد بيوم واحد. هل الأفضل أن أستخدم الرسائل النصية أم الإشعارات داخل التطبيق، مع العلم أن كثيراً من المرضى من كبار السن؟`,
    `مع وجود عدد كبير من المرضى من كبار السن، تبقى الرسائل النصية الخيار الأكثر موثوقية، لأنها تصل إلى أي هاتف ولا تتطلب تثبيت التطبيق أو تفعيل الإشعارات. يمكنك أن تجعل الإشعارات داخل التطبيق خياراً إضافياً لمن يفضّلها.

احرص على أن تكون الرسالة قصيرة وواضحة: اسم العيادة، وموعد الزيارة، وطريقة سهلة للتأكيد أو الإلغاء، مثل الرد برقم واحد. ومن المفيد أيضاً إرسال التذكير في وقت مناسب من النهار، وليس في ساعة متأخرة من الليل، وتسجيل الردود في النظام حتى تعرف العيادة مسبقاً أي المواعيد قد تُلغى.`,
  ],
};
